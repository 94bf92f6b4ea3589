from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from pitweb.core import protocol
from pitweb.execution import api as execution_api
from pitweb.execution import views as execution
from pitweb.points import views as points
from pitweb.points.api import AnswerSetsApi
from pitweb.runs import api, views

urlpatterns = [
    path("favicon.ico", lambda request: redirect(static("pitweb/favicon.svg"), permanent=True)),
    path("", views.leaderboard_page, name="leaderboard"),
    path("leaderboard.csv", views.leaderboard_csv_page, name="leaderboard-csv"),
    path("leaderboard-chart.json", views.leaderboard_chart, name="leaderboard-chart"),
    path("runs/<str:sha>/", views.run_page, name="run"),
    path("runs/<str:sha>/cells.json", views.run_cells_json, name="run-cells-json"),
    path("runs/<str:sha>/tables/<str:name>", views.run_table, name="run-table"),
    path("runs/<str:sha>/status.json", views.run_status_json, name="run-status-json"),
    path("runs/<str:sha>/download/<str:what>", views.run_download, name="run-download"),
    path("runs/<str:sha>/staff/<str:action>", views.staff_action, name="run-staff"),
    path("runs/<str:sha>/withdraw", views.withdraw_action, name="run-withdraw"),
    path("families/<str:family_id>/", views.family_page, name="family"),
    path("snapshots/", views.snapshots_page, name="snapshots"),
    path("snapshots/publish", views.snapshot_publish_action, name="snapshot-publish"),
    path("snapshots/<str:snapshot_id>/", views.snapshot_page, name="snapshot"),
    path("compare/", views.compare_page, name="compare"),
    path("methodology/", views.methodology_page, name="methodology"),
    path("releases/<str:digest>/", views.release_page, name="release"),
    path("changelog/", views.changelog_page, name="changelog"),
    path("status/", views.status_page, name="status"),
    # POST only (Django's rule); back to the page it was asked from (``next``), else home
    path("logout/", LogoutView.as_view(next_page="leaderboard"), name="logout"),
    path("protocol/", protocol.protocol_index, name="protocol"),
    path("protocol/<str:dialect>/<str:name>", protocol.protocol_file, name="protocol-file"),
    path("agents/", execution.agents_page, name="agents"),
    path("agents/do/<str:action>", execution.agents_action, name="agents-action"),
    path("executions/<str:job_id>/", execution.execution_page, name="execution"),
    path("executions/<str:job_id>.json", execution.execution_json, name="execution-json"),
    path("points/", points.point_sets_page, name="point-sets"),
    path("points/upload/", points.point_set_upload_page, name="point-set-upload"),
    path("points/models/", points.models_page, name="points-models"),
    path("points/<str:name>/", points.point_set_page, name="point-set"),
    path("points/<str:name>/reveal/", points.point_set_reveal_page, name="point-set-reveal"),
    path("points/<str:name>/jobs/", points.points_job_page, name="points-job"),
    path("points/jobs/<str:job_id>.json", points.points_job_json, name="points-job-json"),
    path("points/<str:name>/judged/<str:judged_id>/", points.judged_set_page, name="judged-set"),
    path(
        "api/points/<str:name>/answer-sets/",
        AnswerSetsApi.as_view(),
        name="api-answer-sets",
    ),
    path("api/runs/", api.RunsApi.as_view(), name="api-runs"),
    path("api/runs/<str:sha>/", api.RunApi.as_view(), name="api-run"),
    path("api/runs/<str:sha>/reverify/", api.ReverifyApi.as_view(), name="api-reverify"),
    path("api/runs/<str:sha>/withdraw/", api.WithdrawApi.as_view(), name="api-withdraw"),
    path("api/families/<str:family_id>/", api.FamilyApi.as_view(), name="api-family"),
    path("api/snapshots/", api.SnapshotsApi.as_view(), name="api-snapshots"),
    path("api/snapshots/<str:snapshot_id>/", api.SnapshotApi.as_view(), name="api-snapshot"),
    path("api/jobs/<int:job_id>/", api.JobApi.as_view(), name="api-job"),
    path("api/agents/", execution_api.AgentsApi.as_view(), name="api-agents"),
    path(
        "api/agents/<str:name>/executions/",
        execution_api.ExecuteApi.as_view(),
        name="api-agent-executions",
    ),
    path(
        "api/executions/<str:job_id>/", execution_api.ExecutionApi.as_view(), name="api-execution"
    ),
    path(
        "api/runs/<str:sha>/reexecute/", execution_api.ReexecuteApi.as_view(), name="api-reexecute"
    ),
    path("api/leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path(
        "api/releases/<str:digest>/prices/",
        api.ReferencePricesApi.as_view(),
        name="api-reference-prices",
    ),
    path("api/leaderboard.csv", api.LeaderboardCsvApi.as_view(), name="api-leaderboard-csv"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/", admin.site.urls),
]

handler400 = "pitweb.core.errors.bad_request"
handler404 = "pitweb.core.errors.not_found"
handler500 = "pitweb.core.errors.server_error"
