package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VerticalPodAutoscalerCheckpoint holds the recommender's usage history of one container of one
// VerticalPodAutoscaler (or Hvpa), so that recommendations survive a restart.
//
// It has no status subresource, as upstream's CRD has none: upstream's recommender creates a checkpoint with
// its status and replaces the status with a patch of the object, which a status subresource would drop.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vpacheckpoint,path=verticalpodautoscalercheckpoints,singular=verticalpodautoscalercheckpoint,scope=Namespaced
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes/kubernetes/pull/63797"
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="VPA",type="string",JSONPath=".spec.vpaObjectName"
// +kubebuilder:printcolumn:name="Container",type="string",JSONPath=".spec.containerName"
// +kubebuilder:printcolumn:name="Samples",type="integer",JSONPath=".status.totalSamplesCount"
// +kubebuilder:printcolumn:name="Updated",type="date",JSONPath=".status.lastUpdateTime"
type VerticalPodAutoscalerCheckpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the autoscaler and container this checkpoint belongs to.
	// +optional
	Spec VerticalPodAutoscalerCheckpointSpec `json:"spec,omitempty"`

	// status holds the checkpointed history.
	// +optional
	Status VerticalPodAutoscalerCheckpointStatus `json:"status,omitempty"`
}

// VerticalPodAutoscalerCheckpointSpec names the owner of a checkpoint.
type VerticalPodAutoscalerCheckpointSpec struct {
	// vpaObjectName is the name of the VerticalPodAutoscaler (or Hvpa) in the checkpoint's namespace.
	// +optional
	VPAObjectName string `json:"vpaObjectName,omitempty"`
	// containerName is the name of the container.
	// +optional
	ContainerName string `json:"containerName,omitempty"`
}

// VerticalPodAutoscalerCheckpointStatus is the checkpointed history of one container.
type VerticalPodAutoscalerCheckpointStatus struct {
	// lastUpdateTime is when the checkpoint was written.
	// +optional
	// +nullable
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// version of the checkpoint format.
	// +optional
	Version string `json:"version,omitempty"`
	// cpuHistogram is the decaying histogram of CPU usage.
	// +optional
	CPUHistogram HistogramCheckpoint `json:"cpuHistogram,omitempty"`
	// memoryHistogram is the decaying histogram of memory peaks.
	// +optional
	MemoryHistogram HistogramCheckpoint `json:"memoryHistogram,omitempty"`
	// firstSampleStart is the time of the first sample in the history.
	// +optional
	// +nullable
	FirstSampleStart metav1.Time `json:"firstSampleStart,omitempty"`
	// lastSampleStart is the time of the last sample in the history.
	// +optional
	// +nullable
	LastSampleStart metav1.Time `json:"lastSampleStart,omitempty"`
	// totalSamplesCount is the number of samples in the history.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TotalSamplesCount int `json:"totalSamplesCount,omitempty"`
}

// HistogramCheckpoint is a compact form of a decaying histogram.
type HistogramCheckpoint struct {
	// referenceTimestamp is the time the bucket weights are relative to.
	// +optional
	// +nullable
	ReferenceTimestamp metav1.Time `json:"referenceTimestamp,omitempty"`
	// bucketWeights maps a bucket index to its weight, scaled so that the largest weight is 10000. Empty
	// buckets are left out.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	BucketWeights map[int]uint32 `json:"bucketWeights,omitempty"`
	// totalWeight is the sum of all bucket weights before scaling.
	// +optional
	TotalWeight float64 `json:"totalWeight,omitempty"`
}

// VerticalPodAutoscalerCheckpointList is a list of VerticalPodAutoscalerCheckpoint objects.
//
// +kubebuilder:object:root=true
type VerticalPodAutoscalerCheckpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VerticalPodAutoscalerCheckpoint `json:"items"`
}
