{{/*
Rule blocks several components share. Every rule says what its verbs are for; chart_test.go checks that each
rule has such a comment and that no rule has a wildcard but rbac.readScaleOfAnyKind's get of any kind's scale.
*/}}

{{/*
A component's rules from the +kubebuilder:rbac markers of the Go packages it runs:
files/rbac/<component>.yaml, which `make manifests` writes with controller-gen (never edit it by hand). What
each rule's verbs are for is written above its marker; the comment rendered here says where.
*/}}
{{- define "hvpa.rules.generated" -}}
{{- $file := printf "files/rbac/%s.yaml" .component }}
{{- $role := .root.Files.Get $file | fromYaml }}
{{- if not $role.rules }}
{{- fail (printf "%s has no rules: run `make manifests` to generate it from the +kubebuilder:rbac markers" $file) }}
{{- end }}
{{- range $role.rules }}
# {{ $file }}: generated from +kubebuilder:rbac markers, each with its reason above it
{{ list . | toYaml }}
{{- end }}
{{- end }}

{{/* rbac.extraTargets: each resource with .verbs, and its scale subresource with .scaleVerbs; with
rbac.readScaleOfAnyKind, the scale subresource of any kind too (get only). */}}
{{- define "hvpa.rules.extraTargets" -}}
{{- if .root.Values.rbac.readScaleOfAnyKind }}
# */scale of any kind (rbac.readScaleOfAnyKind, upstream's system:vpa-target-reader): tell whether a pod's
# owner of a kind not built in is a workload, and read its selector (the only wildcard the chart renders)
- apiGroups: ["*"]
  resources: ["*/scale"]
  verbs: ["get"]
{{- end }}
{{- range .root.Values.rbac.extraTargets }}
# {{ .resource }}.{{ .apiGroup }} (rbac.extraTargets): {{ $.why }}
- apiGroups: [{{ .apiGroup | quote }}]
  resources: [{{ .resource | quote }}]
  verbs: [{{ $.verbs }}]
# {{ .resource }}/scale (rbac.extraTargets): {{ $.scaleWhy }}
- apiGroups: [{{ .apiGroup | quote }}]
  resources: [{{ printf "%s/scale" .resource | quote }}]
  verbs: [{{ $.scaleVerbs }}]
{{- end }}
{{- end }}

{{/* Leader election: a Lease named after the component in the release namespace, and events about it. */}}
{{- define "hvpa.rules.leaderElection" -}}
# leader election: read and renew this component's Lease
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ .id | quote }}]
  verbs: ["get", "update"]
# leader election: create the Lease the first time (create cannot be restricted by resourceNames)
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
{{- end }}

{{/* metrics.secure: the component asks the API server who a scraper is and whether it may get the URL. */}}
{{- define "hvpa.rules.metricsAuth" -}}
{{- if .Values.metrics.secure }}
# secure metrics: authenticate a scraper's bearer token (TokenReview)
- apiGroups: ["authentication.k8s.io"]
  resources: ["tokenreviews"]
  verbs: ["create"]
# secure metrics: authorize the scraper to get the URL, e.g. /metrics (SubjectAccessReview)
- apiGroups: ["authorization.k8s.io"]
  resources: ["subjectaccessreviews"]
  verbs: ["create"]
{{- end }}
{{- end }}
