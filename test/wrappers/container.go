package wrappers

import corev1 "k8s.io/api/core/v1"

// ContainerWrapper builds a container.
type ContainerWrapper struct{ corev1.Container }

// MakeContainer is a played container without resources.
func MakeContainer(name string) *ContainerWrapper {
	return &ContainerWrapper{corev1.Container{Name: name, Image: Image}}
}

// Obj is the container.
func (w *ContainerWrapper) Obj() corev1.Container { return w.Container }

// Image sets the image.
func (w *ContainerWrapper) Image(image string) *ContainerWrapper {
	w.Container.Image = image
	return w
}

// Requests sets the cpu and memory requests ("" leaves one out).
func (w *ContainerWrapper) Requests(cpu, memory string) *ContainerWrapper {
	w.Container.Resources.Requests = Resources(cpu, memory)
	return w
}

// Limits sets the cpu and memory limits ("" leaves one out).
func (w *ContainerWrapper) Limits(cpu, memory string) *ContainerWrapper {
	w.Container.Resources.Limits = Resources(cpu, memory)
	return w
}

// Resources sets requests and limits as given (nil leaves them unset).
func (w *ContainerWrapper) Resources(requests, limits corev1.ResourceList) *ContainerWrapper {
	w.Container.Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return w
}

// Sidecar makes the container a sidecar: restartPolicy Always, for a pod's init containers.
func (w *ContainerWrapper) Sidecar() *ContainerWrapper {
	always := corev1.ContainerRestartPolicyAlways
	w.Container.RestartPolicy = &always
	return w
}
