// Package controllers holds the reconcilers, one sub-package per reconciled kind (see
// ../shared/design/ARCHITECTURE.md): the VPA recommendation and checkpoint writers (issue 5), the Hvpa
// controller (issue 6) and the updater (issue 8). Reconcilers are thin: read state, call the pure code in
// scaling and recommender, write one status patch and events. Nothing is implemented here yet.
package controllers
