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

{{/* The arguments that turn on TLS for one listener: (list name values). */}}
{{- define "tritonhost.tlsArgs" -}}
{{- $name := index . 0 }}{{- $t := index . 1 }}
{{- if $t.enabled }}
{{- if not $t.secretName }}{{ fail (printf "tls.%s.secretName is required when tls.%s.enabled" $name $name) }}{{ end }}
- --{{ $name }}-use-ssl{{ if $t.mutual }}-mutual{{ end }}=true
- --{{ $name }}-server-cert=/etc/tritonhost/tls/{{ $name }}/tls.crt
- --{{ $name }}-server-key=/etc/tritonhost/tls/{{ $name }}/tls.key
{{- if $t.mutual }}
- --{{ $name }}-root-cert=/etc/tritonhost/tls/{{ $name }}/ca.crt
{{- end }}
{{- end }}
{{- end -}}

{{/* The arguments and environment of one protocol's restricted APIs:
     (list flag envPrefix entries); renders "args" or "env" by the 4th item. */}}
{{- define "tritonhost.restricted" -}}
{{- $flag := index . 0 }}{{- $env := index . 1 }}{{- $entries := index . 2 }}{{- $what := index . 3 }}
{{- range $i, $r := $entries }}
{{- if or (not $r.categories) (not $r.key) (not $r.secretName) (not $r.secretKey) }}
{{- fail (printf "restrictedAPIs: each entry needs categories, key, secretName and secretKey (%s entry %d)" $flag $i) }}
{{- end }}
{{- if eq $what "args" }}
- --{{ $flag }}={{ join "," $r.categories }}:{{ $r.key }}=$({{ $env }}_{{ $i }})
{{- else }}
- name: {{ $env }}_{{ $i }}
  valueFrom:
    secretKeyRef:
      name: {{ $r.secretName }}
      key: {{ $r.secretKey }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Whether the kubelet can probe HTTP over HTTP(S): not under mutual TLS,
     nor with the health category restricted. */}}
{{- define "tritonhost.httpProbes" -}}
{{- $ok := not (and .Values.tls.http.enabled .Values.tls.http.mutual) }}
{{- range .Values.restrictedAPIs.http }}{{ if has "health" .categories }}{{ $ok = false }}{{ end }}{{ end }}
{{- if $ok }}true{{ end }}
{{- end -}}

{{/* One probe's action: (list root probe). */}}
{{- define "tritonhost.probeAction" -}}
{{- $root := index . 0 }}{{- $p := index . 1 }}
{{- if include "tritonhost.httpProbes" $root }}
httpGet:
  path: {{ $p.path }}
  port: http
  {{- if $root.Values.tls.http.enabled }}
  scheme: HTTPS
  {{- end }}
{{- else }}
tcpSocket:
  port: http
{{- end }}
{{- end -}}
