// Package webhooks wires hvpa's admission webhooks: the pod sizing webhook (webhooks/pod), the
// VerticalPodAutoscaler and Hvpa validation webhooks (webhooks/validation), their configurations
// (failurePolicy Ignore, short timeouts) and the self-managed serving certificates (webhooks/certs).
// The webhooks run on every replica of the admission component; nothing here is leader-gated.
package webhooks
