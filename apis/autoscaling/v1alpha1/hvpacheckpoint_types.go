package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// HvpaCheckpoint holds the embedded recommender's usage history of one container of one Hvpa's workload (the
// workload total, docs/design/scaling.md section 2), so that its recommendation survives a restart. It is a kind of its
// own, not a VerticalPodAutoscalerCheckpoint, so that an upstream VPA recommender running beside hvpa, whose
// garbage collection deletes every VerticalPodAutoscalerCheckpoint that names no VPA, never reaches it. Like
// upstream's checkpoint it has no status subresource: a new checkpoint is created with its status in one
// request.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=hvpacheckpoint,path=hvpacheckpoints,singular=hvpacheckpoint,scope=Namespaced
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, hvpa is an out-of-tree autoscaler that uses the autoscaling.k8s.io group like the upstream VPA"
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Hvpa",type="string",JSONPath=".spec.hvpaName"
// +kubebuilder:printcolumn:name="Container",type="string",JSONPath=".spec.containerName"
// +kubebuilder:printcolumn:name="Samples",type="integer",JSONPath=".status.totalSamplesCount"
// +kubebuilder:printcolumn:name="Updated",type="date",JSONPath=".status.lastUpdateTime"
type HvpaCheckpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the Hvpa and container this checkpoint belongs to.
	// +optional
	Spec HvpaCheckpointSpec `json:"spec,omitempty"`

	// status holds the checkpointed history, in the format of a VerticalPodAutoscalerCheckpoint's status, and
	// the workload's recurring bursts.
	// +optional
	Status HvpaCheckpointStatus `json:"status,omitempty"`
}

// HvpaCheckpointStatus is a VerticalPodAutoscalerCheckpoint's status (the workload total's histograms) and
// what the anticipation of a recurring burst reads (docs/design/scaling.md section 2a): the workload's CPU
// usage of its last minutes and the times of its bursts of the last days. After a restart a recurring burst
// is anticipated at once instead of three periods later.
type HvpaCheckpointStatus struct {
	vpav1.VerticalPodAutoscalerCheckpointStatus `json:",inline"`
	// cpuMinutes is the workload's CPU usage of its last minutes (a quarter of an hour), whose bursts are not
	// all judged yet.
	// +optional
	CPUMinutes *CPUMinutes `json:"cpuMinutes,omitempty"`
	// cpuBursts are the times at which a burst of the workload's CPU usage started within a few minutes, over
	// the last days, oldest first.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	CPUBursts []CPUBurst `json:"cpuBursts,omitempty"`
	// cpuBurstAhead is the recurring burst the writer saw ahead last: the return from it (its fall back once
	// it has ended) and the scale-downs held while it is under way read it.
	// +optional
	CPUBurstAhead *CPUBurstAhead `json:"cpuBurstAhead,omitempty"`
}

// CPUBurstAhead is a recurring burst of a workload's CPU usage that was ahead: anticipated from the bursts
// of its last periods.
type CPUBurstAhead struct {
	// from is the start of the first minute the burst was ahead.
	From metav1.Time `json:"from"`
	// to is the start of the last minute it was ahead.
	To metav1.Time `json:"to"`
	// ended is the start of the first minute of its end (its usage back halfway to the usage before it);
	// absent while it has not ended.
	// +optional
	Ended *metav1.Time `json:"ended,omitempty"`
	// endedEarliest is the earliest minute it may have ended, when minutes before ended have no sample (a
	// restart, a gap in the metrics); absent: ended.
	// +optional
	EndedEarliest *metav1.Time `json:"endedEarliest,omitempty"`
	// levelMilliCores is the usage the burst was anticipated at, in millicores.
	// +kubebuilder:validation:Minimum=1
	LevelMilliCores int32 `json:"levelMilliCores"`
	// beforeMilliCores is the peak usage of the quarter of an hour before it, in millicores; absent when none
	// was sampled.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BeforeMilliCores *int32 `json:"beforeMilliCores,omitempty"`
}

// CPUMinutes is a workload's CPU usage by minute: its pods' whole usage (their base included, so that a
// resize of the pods does not read as a burst), summed over its pods (the largest sample of each minute).
type CPUMinutes struct {
	// start is the start of the first minute.
	Start metav1.Time `json:"start"`
	// milliCores holds the usage of each minute from start on, in millicores; -1 for a minute without a sample.
	// +kubebuilder:validation:MaxItems=1440
	MilliCores []int32 `json:"milliCores"`
}

// CPUBurst is a run of minutes at each of which a burst of the workload's CPU usage started within a few
// minutes (it rose to 1.5 times the usage before it and 100 millicores above it at least, and held that).
type CPUBurst struct {
	// start is the start of the first minute.
	Start metav1.Time `json:"start"`
	// minutes is how many minutes the run lasts.
	// +kubebuilder:validation:Minimum=1
	Minutes int32 `json:"minutes"`
	// peakMilliCores is the burst's largest usage in its first ten minutes.
	PeakMilliCores int32 `json:"peakMilliCores"`
}

// HvpaCheckpointSpec names the owner of a checkpoint.
type HvpaCheckpointSpec struct {
	// hvpaName is the name of the Hvpa in the checkpoint's namespace.
	// +optional
	HvpaName string `json:"hvpaName,omitempty"`
	// containerName is the name of the container.
	// +optional
	ContainerName string `json:"containerName,omitempty"`
}

// HvpaCheckpointList is a list of HvpaCheckpoints.
//
// +kubebuilder:object:root=true
type HvpaCheckpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []HvpaCheckpoint `json:"items"`
}
