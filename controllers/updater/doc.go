// Package updater is the updater: every loop (--updater-interval) it reads the pods of each VPA and Hvpa in
// Recreate, InPlaceOrRecreate or InPlace mode (or an Hvpa's intent), plans in pure code which pods to resize
// or evict (plan.go: candidates, the disruption budget, the eviction tolerance, the outcome after a refusal
// or a dry run), and applies the plan: in-place resizes through the pods/resize subresource, evictions
// through the Eviction API within PodDisruptionBudgets after a server-side dry run of the replacement, loop
// records against eviction loops (loops.go), and upstream VPA's event reasons (events.go). Its metrics are in
// metrics.go, its RBAC markers in rbac.go.
package updater
