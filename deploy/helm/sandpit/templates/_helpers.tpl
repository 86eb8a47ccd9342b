{{- define "sandpit.labels" -}}
app.kubernetes.io/name: sandpit
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "sandpit.secretName" -}}
{{- if .Values.existingSecret -}}
{{ .Values.existingSecret }}
{{- else -}}
{{ .Release.Name }}-sandpit
{{- end -}}
{{- end }}

{{- define "sandpit.sharedEnv" -}}
- name: SANDPIT_REGION
  value: {{ .Values.region | quote }}
- name: SANDPIT_CLUSTER_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "sandpit.secretName" . }}
      key: cluster-key
- name: SANDPIT_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "sandpit.secretName" . }}
      key: database-url
- name: SANDPIT_SECRETS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "sandpit.secretName" . }}
      key: secrets-key
      optional: true
{{- end }}

{{- define "sandpit.tlsSecret" -}}
{{ required "internalTls.existingSecret is required: a Secret with ca.crt, api.crt, api.key, node.crt and node.key (sandpit cluster certs, docs/kubernetes.md), or set internalTls.enabled=false" .Values.internalTls.existingSecret }}
{{- end }}

{{- define "sandpit.nodePort" -}}
{{- if .Values.internalTls.enabled -}}
https
{{- else -}}
http
{{- end -}}
{{- end }}
