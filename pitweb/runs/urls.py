from django.urls import path

from pitweb.runs import api, views

urlpatterns = [
    path("runs/<str:sha>/", views.run_page, name="run"),
    path("runs/<str:sha>/cells.json", views.run_cells_json, name="run-cells-json"),
    path(
        "runs/<str:sha>/every-eval-ever.json",
        views.run_every_eval_ever,
        name="run-every-eval-ever",
    ),
    path("runs/<str:sha>/tables/<str:name>", views.run_table, name="run-table"),
    path("runs/<str:sha>/status.json", views.run_status_json, name="run-status-json"),
    path("runs/<str:sha>/download/<str:what>", views.run_download, name="run-download"),
    path(
        "runs/<str:sha>/reasoning-audit.json",
        views.run_reasoning_audit_json,
        name="run-reasoning-audit",
    ),
    path("runs/<str:sha>/staff/<str:action>", views.staff_action, name="run-staff"),
    path("runs/<str:sha>/withdraw", views.withdraw_action, name="run-withdraw"),
    path("methodology/", views.methodology_page, name="methodology"),
    path("changelog/", views.changelog_page, name="changelog"),
    path("status/", views.status_page, name="status"),
    path("api/runs/", api.RunsApi.as_view(), name="api-runs"),
    path("api/runs/<str:sha>/", api.RunApi.as_view(), name="api-run"),
    path("api/runs/<str:sha>/reverify/", api.ReverifyApi.as_view(), name="api-reverify"),
    path("api/runs/<str:sha>/withdraw/", api.WithdrawApi.as_view(), name="api-withdraw"),
    path("api/jobs/<int:job_id>/", api.JobApi.as_view(), name="api-job"),
]
