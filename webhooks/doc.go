// Package webhooks will hold the pod admission handler that sizes new pods through the scaling package, the
// VPA and Hvpa object validation, and certificate management (issue 7). Nothing is implemented here yet.
package webhooks
