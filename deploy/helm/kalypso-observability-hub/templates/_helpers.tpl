{{/*
Names. With release name "kalypso" (the docs' choice) every object is kalypso-<part>; a release
name without "kalypso" in it is prefixed: <release>-kalypso-<part>. 40 characters leave room for
the longest suffix (-hub-otlp-pods) and a StatefulSet's pod and revision names within 63.
*/}}
{{- define "kalypso.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default "kalypso" .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kalypso.hub.name" -}}{{ include "kalypso.fullname" . }}-hub{{- end -}}
{{- define "kalypso.postgresql.name" -}}{{ include "kalypso.fullname" . }}-postgresql{{- end -}}
{{- define "kalypso.grafana.name" -}}{{ include "kalypso.fullname" . }}-grafana{{- end -}}

{{- define "kalypso.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kalypso.hub.name" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries; "component" is added per part. */}}
{{- define "kalypso.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kalypso
{{- end -}}

{{/* Selector labels of one part (hub, postgresql, grafana): stable across upgrades. */}}
{{- define "kalypso.selectorLabels" -}}
app.kubernetes.io/name: {{ .context.Chart.Name }}
app.kubernetes.io/instance: {{ .context.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "kalypso.hub.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The hub's HTTP scheme: HTTPS once TLS is on (probes, ServiceMonitor, NOTES). */}}
{{- define "kalypso.hub.scheme" -}}{{ if .Values.tls.existingSecret }}https{{ else }}http{{ end }}{{- end -}}

{{/* KALYPSO_PUBLIC_URL: the value, else the first Ingress host. */}}
{{- define "kalypso.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- $host := (first .Values.ingress.hosts).host -}}
{{- $secure := false -}}
{{- range .Values.ingress.tls }}{{ if has $host .hosts }}{{ $secure = true }}{{ end }}{{ end -}}
{{- printf "%s://%s" (ternary "https" "http" $secure) $host -}}
{{- end -}}
{{- end -}}

{{/*
A password kept across upgrades: the one already in the release's Secret (looked up; `helm
template` and GitOps tools that render without a cluster see none), else a new random one.
Arguments: context, secret (name), key.
*/}}
{{- define "kalypso.keptPassword" -}}
{{- $existing := lookup "v1" "Secret" .context.Release.Namespace .secret -}}
{{- if and $existing (hasKey $existing.data .key) -}}
{{- index $existing.data .key -}}
{{- else -}}
{{- randAlphaNum 32 | b64enc -}}
{{- end -}}
{{- end -}}

{{- define "kalypso.postgresql.secretName" -}}
{{- default (include "kalypso.postgresql.name" .) .Values.postgresql.auth.existingSecret -}}
{{- end -}}

{{- define "kalypso.grafana.adminSecretName" -}}
{{- default (printf "%s-admin" (include "kalypso.grafana.name" .)) .Values.grafana.admin.existingSecret -}}
{{- end -}}

{{/*
Settings the chart sets from its own values, and where to set them instead. `settings` refuses
them, so that a value never silently loses to (or overrides) what the chart derived.
*/}}
{{- define "kalypso.chartSettings" -}}
database-url: postgresql.* or externalDatabase.existingSecret
data-dir: nothing (the embedded PostgreSQL is never used in the chart)
embedded-pg-port: nothing (the embedded PostgreSQL is never used in the chart)
embedded-pg-password: nothing (the embedded PostgreSQL is never used in the chart)
embedded-pg-restart-timeout: nothing (the embedded PostgreSQL is never used in the chart)
api-token: auth.existingSecret
ingest-token: auth.existingSecret
tls-cert-file: tls.existingSecret
tls-key-file: tls.existingSecret
listen-host: nothing (the Services and probes need every port on every address)
http-port: service.api.port (the container port is fixed)
otlp-grpc-port: service.otlp.grpcPort (the container port is fixed)
otlp-http-port: service.otlp.httpPort (the container port is fixed)
kube: kube.enabled
kube-namespaces: kube.namespaces
kube-cluster-name: kube.clusterName
leader-election-namespace: nothing (the Lease is in the release namespace, where the Role allows it)
leader-election-lease: nothing (the Lease is named after the release, as the Role allows it)
argocd: argocd.enabled
arg-config: resourceGraph.sources
notifications: notifications
public-url: publicUrl
{{- end -}}

{{/*
The original hub's chart (helm/kalypso-observability-hub 1.x) had other values. A values file
written for it fails here, naming each old key and its replacement, rather than installing a hub
that silently ignores them (docs/deploying.md, "Moving from the original chart").
*/}}
{{- define "kalypso.originalValues" -}}
controllerManager: "the hub is one Deployment: image.*, replicaCount, resources"
controllerManagerConfig: "storageServiceAddress is gone (the hub stores directly); workspace and application become spec.defaultWorkspace / spec.defaultApplication of each AzureResourceGraph (or resourceGraph.sources)"
api-server: "there is no gRPC storage API: postgresql.* (bundled) or externalDatabase.existingSecret"
postgres: "postgresql.* (bundled; auth.existingSecret for your own passwords) or externalDatabase.existingSecret"
kubernetesClusterDomain: "nothing: the chart uses the Services' short names"
metricsService: "metrics.serviceMonitor.* (the hub serves /metrics on service.api.port)"
{{- end -}}
{{- define "kalypso.originalGrafanaValues" -}}
grafana: "grafana.image.*"
config: "grafana.extraEnv (GF_* variables); anonymous access is not configured"
pvc: "nothing: everything Grafana shows is provisioned"
grafanaSvc: "grafana.service.*"
{{- end -}}

{{/* Checks across values that the schema cannot state with a useful message. */}}
{{- define "kalypso.validate" -}}
{{- $problems := list -}}
{{- range $key, $instead := include "kalypso.originalValues" . | fromYaml -}}
{{- if hasKey $.Values $key -}}
{{- $problems = append $problems (printf "%s is a value of the original hub's chart; here: %s" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- range $key, $instead := include "kalypso.originalGrafanaValues" . | fromYaml -}}
{{- if hasKey $.Values.grafana $key -}}
{{- $problems = append $problems (printf "grafana.%s is a value of the original hub's chart; here: %s" $key $instead) -}}
{{- end -}}
{{- end -}}
{{- $chartSettings := include "kalypso.chartSettings" . | fromYaml -}}
{{- range $key, $_ := .Values.settings -}}
{{- if hasKey $chartSettings $key -}}
{{- $problems = append $problems (printf "settings.%s is set by the chart: use %s" $key (get $chartSettings $key)) -}}
{{- end -}}
{{- end -}}
{{- if and (not .Values.postgresql.enabled) (not .Values.externalDatabase.existingSecret) -}}
{{- $problems = append $problems "postgresql.enabled is false: name the Secret with your database's URL in externalDatabase.existingSecret" -}}
{{- end -}}
{{- if and .Values.grafana.enabled (not .Values.postgresql.enabled) (not .Values.grafana.database.existingSecret) -}}
{{- $problems = append $problems "grafana.enabled with an external database: name the Secret with Grafana's reader login in grafana.database.existingSecret (or grafana.enabled=false)" -}}
{{- end -}}
{{- if and .Values.argocd.enabled (not .Values.kube.enabled) -}}
{{- $problems = append $problems "argocd.enabled needs kube.enabled: the CRD watcher reads the Applications" -}}
{{- end -}}
{{- if and .Values.argocd.enabled (not .Values.kube.clusterName) -}}
{{- $problems = append $problems "argocd.enabled: set kube.clusterName, the host name of Applications deployed to this cluster (in a pod the kubeconfig has no cluster name)" -}}
{{- end -}}
{{- $channels := 0 -}}
{{- range $_, $entries := .Values.notifications -}}
{{- if kindIs "slice" $entries }}{{ $channels = add $channels (len $entries) }}{{ end -}}
{{- end -}}
{{- if and (gt $channels 0) (not (include "kalypso.publicUrl" .)) -}}
{{- $problems = append $problems "notifications: set publicUrl (or an Ingress host), the address the links in commit statuses and events lead to: the hub refuses notifications without --public-url" -}}
{{- end -}}
{{- if and .Values.grafana.alerting.webhookUrl .Values.grafana.alerting.webhookUrlFrom -}}
{{- $problems = append $problems "grafana.alerting: set webhookUrl or webhookUrlFrom, not both" -}}
{{- end -}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) -}}
{{- $problems = append $problems "ingress.enabled: list at least one host in ingress.hosts" -}}
{{- end -}}
{{- if $problems -}}
{{- fail (printf "\n  - %s\n(docs/deploying.md lists every value)" (join "\n  - " $problems)) -}}
{{- end -}}
{{- end -}}

{{/*
Entries of a file the hub reads (Resource Graph sources, notification providers) with their
chart-only `<field>From: {secretKeyRef: {name, key}}` turned into the `<field>File` the hub reads,
at <dir>/<secret>/<key>; and the Secret keys to mount there. Arguments: entries, dir.
Returns YAML: {entries: [...], secrets: {<secret>: [<key>, …]}}.
*/}}
{{- define "kalypso.withSecretFiles" -}}
{{- $entries := list -}}
{{- $secrets := dict -}}
{{- range $entry := .entries -}}
{{- $copy := deepCopy $entry -}}
{{- range $field, $value := $entry -}}
{{- if and (hasSuffix "From" $field) (kindIs "map" $value) (hasKey $value "secretKeyRef") -}}
{{- $ref := $value.secretKeyRef -}}
{{- $_ := unset $copy $field -}}
{{- $_ := set $copy (printf "%sFile" (trimSuffix "From" $field)) (printf "%s/%s/%s" $.dir $ref.name $ref.key) -}}
{{- $_ := set $secrets $ref.name (append (get $secrets $ref.name | default list) $ref.key | uniq) -}}
{{- end -}}
{{- end -}}
{{- $entries = append $entries $copy -}}
{{- end -}}
{{- dict "entries" $entries "secrets" $secrets | toYaml -}}
{{- end -}}

{{/* The notifications file and the Secret keys it reads, from .Values.notifications. */}}
{{- define "kalypso.notifications" -}}
{{- $file := dict -}}
{{- $secrets := dict -}}
{{- range $section, $entries := .Values.notifications -}}
{{- if kindIs "slice" $entries -}}
{{- $converted := include "kalypso.withSecretFiles" (dict "entries" $entries "dir" "/etc/kalypso/notifications/secrets") | fromYaml -}}
{{- $_ := set $file $section $converted.entries -}}
{{- range $name, $keys := $converted.secrets -}}
{{- $_ := set $secrets $name (concat (get $secrets $name | default list) $keys | uniq) -}}
{{- end -}}
{{- else -}}
{{- $_ := set $file $section $entries -}}
{{- end -}}
{{- end -}}
{{- dict "file" $file "secrets" $secrets | toYaml -}}
{{- end -}}

{{/* The --arg-config file and the Secret keys it reads, from .Values.resourceGraph.sources. */}}
{{- define "kalypso.resourceGraph" -}}
{{- $converted := include "kalypso.withSecretFiles" (dict "entries" .Values.resourceGraph.sources "dir" "/etc/kalypso/resource-graph/secrets") | fromYaml -}}
{{- dict "file" $converted.entries "secrets" $converted.secrets | toYaml -}}
{{- end -}}

{{/* Projected volume sources for Secret keys mounted as files under secrets/<name>/<key>. */}}
{{- define "kalypso.secretFileSources" -}}
{{- range $name, $keys := . }}
- secret:
    name: {{ $name }}
    items:
      {{- range $key := $keys }}
      - key: {{ $key }}
        path: secrets/{{ $name }}/{{ $key }}
      {{- end }}
{{- end }}
{{- end -}}


{{/*
Grafana's alerting variables (docs/alerts.md), the same in the init container that picks the
alerting files (select-alerting.sh) and in Grafana, which expands them in those files.
*/}}
{{- define "kalypso.grafana.alertingEnv" -}}
{{- $alerting := .Values.grafana.alerting -}}
{{- with include "kalypso.publicUrl" . }}
# Links from alerts into the hub.
- name: KALYPSO_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- if $alerting.webhookUrl }}
- name: KALYPSO_ALERT_WEBHOOK_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "kalypso.grafana.name" . }}-alert-webhook
      key: url
{{- else if $alerting.webhookUrlFrom }}
- name: KALYPSO_ALERT_WEBHOOK_URL
  valueFrom:
    {{- toYaml $alerting.webhookUrlFrom | nindent 4 }}
{{- end }}
{{- with $alerting.webhookType }}
- name: KALYPSO_ALERT_WEBHOOK_TYPE
  value: {{ . | quote }}
{{- end }}
{{- with $alerting.runbookUrl }}
- name: KALYPSO_ALERT_RUNBOOK_URL
  value: {{ . | quote }}
{{- end }}
{{- end -}}
