// Package workload resolves what autoscalers point at: a targetRef's object and pod selector, the scale
// subresource of any workload, and a pod's top-most controller. The recommender, the Hvpa controller, the
// admission webhook and the updater all resolve workloads through it, so they agree on what an autoscaler
// controls.
package workload
