{{- define "sw.name" -}}{{ .Release.Name }}{{- end -}}
{{- define "sw.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- define "sw.sa" -}}{{ .Values.serviceAccount.name | default (printf "%s-smarter-worker" .Release.Name) }}{{- end -}}

{{- define "sw.labels" -}}
app.kubernetes.io/part-of: smarter
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/application-group: smarter
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* The environment of every container: Smarter's settings, the queues (from .Values.queues only), credentials from Secrets. */}}
{{- define "sw.env" -}}
- name: SMARTER_LLM_CLIENT_TASKS_CELERY_TASK_QUEUE
  value: {{ .Values.queues.operational | quote }}
- name: SMARTER_INFRASTRUCTURE_TASKS_CELERY_TASK_QUEUE
  value: {{ .Values.queues.infrastructure | quote }}
- name: SMARTER_WORKER_HTTP_PORT
  value: {{ .Values.httpPort | quote }}
- name: SMARTER_BEAT_HTTP_PORT
  value: {{ .Values.httpPort | quote }}
- name: SMARTER_WORKER_SHUTDOWN_GRACE
  value: {{ .Values.shutdownGrace | quote }}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
- name: CELERY_BROKER_URL
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.broker.name }}, key: {{ .Values.secrets.broker.key }} } }
{{- if .Values.secrets.resultBackend.name }}
- name: CELERY_RESULT_BACKEND
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.resultBackend.name }}, key: {{ .Values.secrets.resultBackend.key }} } }
{{- end }}
- name: SMARTER_MYSQL_PASSWORD
  valueFrom: { secretKeyRef: { name: {{ .Values.secrets.mysql.name }}, key: {{ .Values.secrets.mysql.passwordKey }} } }
{{- end -}}

{{/* Probes on the health endpoint (not a process check): alive as soon as the process serves HTTP, ready once it consumes. */}}
{{- define "sw.probes" -}}
startupProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 5
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 30
  timeoutSeconds: 5
  failureThreshold: 3
readinessProbe:
  httpGet: { path: {{ .path | default "/readyz" }}, port: http }
  periodSeconds: 15
  timeoutSeconds: 5
  failureThreshold: 3
{{- end -}}

{{- define "sw.pod" -}}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ add .Values.shutdownGrace 30 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
