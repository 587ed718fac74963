// Package controllers holds the reconcilers, one sub-package per reconciled kind (see
// ../shared/design/ARCHITECTURE.md): vpa (the recommender loop writing VerticalPodAutoscaler status and
// checkpoints) and hvpa (the Hvpa controller). The updater lands with its issue. Reconcilers are thin: read
// state, call the pure code in scaling and recommender, write one status patch and events.
package controllers
