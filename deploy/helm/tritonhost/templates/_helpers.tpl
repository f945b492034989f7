{{- define "tritonhost.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tritonhost.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tritonhost.labels" -}}
app.kubernetes.io/name: {{ include "tritonhost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "tritonhost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tritonhost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
