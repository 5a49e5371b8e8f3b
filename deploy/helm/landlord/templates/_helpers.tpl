{{/* The release's name for its objects, at most 63 characters. */}}
{{- define "landlord.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "landlord.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "landlord.labels" -}}
{{ include "landlord.selectorLabels" . }}
app.kubernetes.io/version: {{ include "landlord.tag" . | quote }}
app.kubernetes.io/component: control-plane
app.kubernetes.io/part-of: landlord
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "landlord.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "landlord.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "landlord.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "landlord.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (include "landlord.tag" .) -}}
{{- end -}}
{{- end -}}

{{/* postgres is true when the database is PostgreSQL. */}}
{{- define "landlord.postgres" -}}
{{- if .Values.database.urlSecret.name -}}true{{- end -}}
{{- end -}}

{{- define "landlord.scheme" -}}
{{- if .Values.tls.enabled -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* The TLS Secret: the one named, or cert-manager's. */}}
{{- define "landlord.tlsSecret" -}}
{{- default (printf "%s-tls" (include "landlord.fullname" .)) .Values.tls.secretName -}}
{{- end -}}

{{/* landlord.yaml, from the values. */}}
{{- define "landlord.config" -}}
{{- $c := dict "compute" .Values.compute -}}
{{- if not (include "landlord.postgres" .) -}}
{{- $_ := set $c "database" (dict "driver" "sqlite" "path" "/var/lib/landlord/landlord.db") -}}
{{- end -}}
{{- if .Values.tls.enabled -}}
{{- $_ := set $c "tls" (dict "cert_file" "/etc/landlord/tls/tls.crt" "key_file" "/etc/landlord/tls/tls.key") -}}
{{- end -}}
{{- if .Values.insecureHTTP -}}
{{- $_ := set $c "insecure_http" true -}}
{{- end -}}
{{- with .Values.trustedProxies -}}
{{- $_ := set $c "trusted_proxies" . -}}
{{- end -}}
{{- with .Values.auth.oidc -}}
{{- if .issuer -}}
{{- $o := dict "issuer" .issuer "audience" .audience -}}
{{- with .adminGroups }}{{ $_ := set $o "admin_groups" . }}{{ end -}}
{{- with .readerGroups }}{{ $_ := set $o "reader_groups" . }}{{ end -}}
{{- with .groupsClaim }}{{ $_ := set $o "groups_claim" . }}{{ end -}}
{{- with .actorClaim }}{{ $_ := set $o "actor_claim" . }}{{ end -}}
{{- with .actorPrefix }}{{ $_ := set $o "actor_prefix" . }}{{ end -}}
{{- if .caSecret }}{{ $_ := set $o "ca_file" "/etc/landlord/oidc/ca.crt" }}{{ end -}}
{{- $_ := set $c "oidc" $o -}}
{{- end -}}
{{- end -}}
{{- if .Values.encryption.secretName -}}
{{- $keys := list -}}
{{- range .Values.encryption.keys -}}
{{- $keys = append $keys (dict "id" . "file" (printf "/etc/landlord/encryption/%s" .)) -}}
{{- end -}}
{{- $e := dict "keys" $keys -}}
{{- with .Values.encryption.primary }}{{ $_ := set $e "primary" . }}{{ end -}}
{{- $_ := set $c "encryption" $e -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $c (deepCopy .Values.config)) -}}
{{- end -}}
