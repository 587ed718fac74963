// Package controllers holds the reconcilers and loops, one sub-package per component (docs/architecture.md):
// recommender (the recommender loop: usage in, VerticalPodAutoscaler status, checkpoints and the Hvpas' embedded
// recommendations out), hvpa (the Hvpa controller: its HPA, the decision through scaling, status, /scale and
// events) and updater (in-place resizes through pods/resize and evictions through the Eviction API). Each
// has the same shape: observe (read everything into one plain value), decide in pure code (scaling,
// recommender, hvpacycle, updater's plan.go), apply (status first, then act, then events).
package controllers
