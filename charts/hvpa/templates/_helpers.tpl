{{/* Names. */}}
{{- define "hvpa.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hvpa.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "hvpa.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The components: the values key of each, the suffix of its object names, and the name `hvpa run --components`
knows it by.
*/}}
{{- define "hvpa.suffix" -}}
{{- get (dict "recommender" "recommender" "hvpaController" "controller" "admissionController" "admission" "updater" "updater") . }}
{{- end }}

{{/* A component's metrics Service: <fullname>-<suffix>-metrics, the fullname cut so that it stays a DNS label
(63) and the suffixes keep the components' names apart. */}}
{{- define "hvpa.metricsServiceName" -}}
{{- $sfx := include "hvpa.suffix" .key }}
{{- printf "%s-%s-metrics" (include "hvpa.fullname" $.root | trunc (int (sub 54 (len $sfx))) | trimSuffix "-") $sfx }}
{{- end }}

{{- define "hvpa.component" -}}
{{- get (dict "recommender" "recommender" "hvpaController" "hvpa" "admissionController" "admission" "updater" "updater") . }}
{{- end }}

{{/* "true" when the Hvpa controller runs in the recommender's process (and has no Deployment of its own). */}}
{{- define "hvpa.colocated" -}}
{{- if and .Values.recommender.enabled .Values.hvpaController.enabled .Values.hvpaController.colocateWithRecommender }}true{{ end }}
{{- end }}

{{/* "true" when the component of values key .key has a Deployment. */}}
{{- define "hvpa.deployed" -}}
{{- $c := index .root.Values .key }}
{{- if and $c.enabled (not (and (eq .key "hvpaController") (include "hvpa.colocated" .root))) }}true{{ end }}
{{- end }}

{{/* Object name of a component: <fullname>-<suffix>. */}}
{{- define "hvpa.componentName" -}}
{{- printf "%s-%s" (include "hvpa.fullname" .root) (include "hvpa.suffix" .key) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The ServiceAccount a component's pods run as: its own, or the recommender's when colocated. */}}
{{- define "hvpa.serviceAccountName" -}}
{{- $key := .key }}
{{- if and (eq $key "hvpaController") (include "hvpa.colocated" .root) }}
{{- $key = "recommender" }}
{{- end }}
{{- $sa := (index .root.Values $key).serviceAccount }}
{{- if $sa.create }}
{{- default (include "hvpa.componentName" (dict "root" .root "key" $key)) $sa.name }}
{{- else }}
{{- default "default" $sa.name }}
{{- end }}
{{- end }}

{{- define "hvpa.leaderElectionID" -}}
{{- $c := index .root.Values .key }}
{{- default (include "hvpa.componentName" .) $c.leaderElection.id }}
{{- end }}

{{- define "hvpa.webhookConfigName" -}}
{{- default (include "hvpa.fullname" .) .Values.admissionController.webhookConfigName }}
{{- end }}

{{- define "hvpa.webhookServiceName" -}}
{{- default (printf "%s-webhook" (include "hvpa.fullname" .)) .Values.admissionController.service.name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hvpa.admissionLeaseName" -}}
{{- default (printf "%s-admission" (include "hvpa.fullname" .)) .Values.admissionController.leaseName | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Secret of the webhook's serving certificate, in every certificate mode. */}}
{{- define "hvpa.webhookSecretName" -}}
{{- $c := .Values.admissionController.certificates }}
{{- if eq $c.mode "self-managed" }}
{{- default (printf "%s-webhook-certs" (include "hvpa.fullname" .)) $c.selfManaged.secretName }}
{{- else if eq $c.mode "cert-manager" }}
{{- printf "%s-webhook-tls" (include "hvpa.fullname" .) }}
{{- else if eq $c.mode "secret" }}
{{- required "admissionController.certificates.secret.name is required with mode secret" $c.secret.name }}
{{- else }}
{{- fail (printf "admissionController.certificates.mode %q: use self-managed, cert-manager or secret" $c.mode) }}
{{- end }}
{{- end }}

{{/* The webhook Service's DNS names (the serving certificate must hold them). */}}
{{- define "hvpa.webhookDNSNames" -}}
{{- $svc := include "hvpa.webhookServiceName" . }}
{{- $ns := .Release.Namespace }}
{{- $names := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) }}
{{- toYaml (concat $names .Values.admissionController.certificates.extraDNSNames | uniq) }}
{{- end }}

{{/* Labels. */}}
{{- define "hvpa.labels" -}}
helm.sh/chart: {{ include "hvpa.chart" . }}
app.kubernetes.io/name: {{ include "hvpa.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: hvpa
{{- with .Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "hvpa.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hvpa.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ include "hvpa.suffix" .key }}
{{- end }}

{{- define "hvpa.componentLabels" -}}
{{ include "hvpa.labels" .root }}
app.kubernetes.io/component: {{ include "hvpa.suffix" .key }}
{{- end }}

{{/* The image of a component: its own values, else global.image, the tag else the chart's appVersion. */}}
{{- define "hvpa.image" -}}
{{- $g := .root.Values.global.image }}
{{- $c := (index .root.Values .key).image | default dict }}
{{- $repo := default $g.repository $c.repository }}
{{- $tag := default (default .root.Chart.AppVersion $g.tag) $c.tag }}
{{- if hasPrefix "sha256:" $tag }}
{{- printf "%s@%s" $repo $tag }}
{{- else }}
{{- printf "%s:%s" $repo $tag }}
{{- end }}
{{- end }}

{{- define "hvpa.pullPolicy" -}}
{{- $c := (index .root.Values .key).image | default dict }}
{{- default .root.Values.global.image.pullPolicy $c.pullPolicy }}
{{- end }}

{{/*
extraArgs as a JSON list of container args: a list is used as it is; a map becomes --key=value in key order (a
list value is joined with commas and left out when empty, a map value rendered as k=v,...).
*/}}
{{- define "hvpa.extraArgs" -}}
{{- $out := list }}
{{- if kindIs "slice" . }}
{{- range . }}{{ $out = append $out (toString .) }}{{ end }}
{{- else if kindIs "map" . }}
{{- range $k, $v := . }}
{{- if kindIs "slice" $v }}
{{- if $v }}
{{- $out = append $out (printf "--%s=%s" $k (join "," $v)) }}
{{- end }}
{{- else if kindIs "map" $v }}
{{- $pairs := list }}
{{- range $mk, $mv := $v }}{{ $pairs = append $pairs (printf "%s=%v" $mk $mv) }}{{ end }}
{{- $out = append $out (printf "--%s=%s" $k (join "," $pairs)) }}
{{- else }}
{{- $out = append $out (printf "--%s=%v" $k $v) }}
{{- end }}
{{- end }}
{{- else if . }}
{{- fail "extraArgs: use a list of arguments or a map of flags" }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* global.featureGates as a JSON list: [--feature-gates=A=true,B=false] or []. */}}
{{- define "hvpa.featureGates" -}}
{{- $pairs := list }}
{{- range $k, $v := .Values.global.featureGates }}
{{- $pairs = append $pairs (printf "%s=%t" $k (eq (toString $v) "true")) }}
{{- end }}
{{- if $pairs }}
{{- toJson (list (printf "--feature-gates=%s" (join "," $pairs))) }}
{{- else }}
{{- toJson list }}
{{- end }}
{{- end }}

{{/* The ConfigMap where the updater keeps its loop-detection records. */}}
{{- define "hvpa.loopRecordsName" -}}
{{- printf "%s-updater-loops" (include "hvpa.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
A component's pod affinity (YAML, empty for none): its affinity value, and on the admission webhook's pods the
podAntiAffinityPreset between its replicas unless affinity.podAntiAffinity is set.
*/}}
{{- define "hvpa.affinity" -}}
{{- $c := index .root.Values .key }}
{{- $affinity := deepCopy ($c.affinity | default dict) }}
{{- $preset := $c.podAntiAffinityPreset }}
{{- if and $preset (not (hasKey $affinity "podAntiAffinity")) }}
{{- $term := dict "topologyKey" $preset.topologyKey "labelSelector" (dict "matchLabels" (include "hvpa.selectorLabels" . | fromYaml)) }}
{{- if eq $preset.type "soft" }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) }}
{{- else if eq $preset.type "hard" }}
{{- $_ := set $affinity "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) }}
{{- else if ne $preset.type "none" }}
{{- fail (printf "%s.podAntiAffinityPreset.type %q: use soft, hard or none" .key $preset.type) }}
{{- end }}
{{- end }}
{{- with $affinity }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{/*
A component's topologySpreadConstraints (YAML, empty for none): its own, else on the admission webhook's pods the
topologySpreadPreset (the replicas of one Deployment revision across topologyKey).
*/}}
{{- define "hvpa.topologySpreadConstraints" -}}
{{- $c := index .root.Values .key }}
{{- $preset := $c.topologySpreadPreset }}
{{- if $c.topologySpreadConstraints }}
{{- toYaml $c.topologySpreadConstraints }}
{{- else if and $preset $preset.enabled }}
{{- $constraint := dict "maxSkew" (int $preset.maxSkew) "topologyKey" $preset.topologyKey "whenUnsatisfiable" $preset.whenUnsatisfiable
      "labelSelector" (dict "matchLabels" (include "hvpa.selectorLabels" . | fromYaml)) "matchLabelKeys" (list "pod-template-hash") }}
{{- toYaml (list $constraint) }}
{{- end }}
{{- end }}
