package v1

import corev1 "k8s.io/api/core/v1"

// ReasonOOMKilled is the reason the kubelet gives a container it terminated for using more memory than its
// limit.
const ReasonOOMKilled = "OOMKilled"

// OOMKill is the termination a container state records when it is an OOM kill, nil otherwise: the one
// reading of a container status that the recommender (its memory bump), the Hvpa controller and the updater
// share.
func OOMKill(s corev1.ContainerState) *corev1.ContainerStateTerminated {
	if t := s.Terminated; t != nil && t.Reason == ReasonOOMKilled {
		return t
	}
	return nil
}
