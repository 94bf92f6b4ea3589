from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from pitweb import home, release_list
from pitweb.core import protocol
from pitweb.execution import api as execution_api
from pitweb.execution import views as execution
from pitweb.points import views as points
from pitweb.points.api import (
    AnswerSetsApi,
    JudgedSetApi,
    PointsBoardApi,
    PointSetApi,
    PointSetsApi,
)

urlpatterns = [
    path("favicon.ico", lambda request: redirect(static("pitweb/favicon.svg"), permanent=True)),
    path("", home.home_page, name="home"),
    path("", include("pitweb.board.urls")),
    path("", include("pitweb.runs.urls")),
    path("releases/", release_list.releases_page, name="releases"),
    path("", include("pitweb.releases.urls")),
    path("", include("pitweb.pricing.urls")),
    path("", include("pitweb.accounts.urls")),
    path("", include("pitweb.forward.urls")),
    path("", include("pitweb.certificates.urls")),
    # POST only (Django's rule); back to the page it was asked from (``next``), else home
    path("logout/", LogoutView.as_view(next_page="home"), name="logout"),
    path("protocol/", protocol.protocol_index, name="protocol"),
    path("protocol/<str:dialect>/<str:name>", protocol.protocol_file, name="protocol-file"),
    path("agents/", execution.agents_page, name="agents"),
    path("agents/do/<str:action>", execution.agents_action, name="agents-action"),
    path("executions/<str:job_id>/", execution.execution_page, name="execution"),
    path("executions/<str:job_id>.json", execution.execution_json, name="execution-json"),
    path("points/", points.point_sets_page, name="point-sets"),
    path("points/upload/", points.point_set_upload_page, name="point-set-upload"),
    path("points/models/", points.models_page, name="points-models"),
    path("points/board/", points.points_board_page, name="points-board"),
    path("points/live/", points.live_cohort_create_page, name="live-cohort-create"),
    path("points/pitfall/", points.pitfall_page, name="pitfall-cohorts"),
    path(
        "points/pitfall/<str:artifact>.json", points.pitfall_artifact_json, name="pitfall-artifact"
    ),
    path("points/<str:name>/", points.point_set_page, name="point-set"),
    path("points/<str:name>/questions.json", points.questions_json, name="point-set-questions"),
    path("points/<str:name>/reveal/", points.point_set_reveal_page, name="point-set-reveal"),
    path("points/<str:name>/resolve/", points.live_point_resolve_page, name="live-point-resolve"),
    path("points/<str:name>/jobs/", points.points_job_page, name="points-job"),
    path("points/jobs/<str:job_id>.json", points.points_job_json, name="points-job-json"),
    path("points/<str:name>/judged/<str:judged_id>/", points.judged_set_page, name="judged-set"),
    path("api/points/", PointSetsApi.as_view(), name="api-point-sets"),
    path("api/points/board/", PointsBoardApi.as_view(), name="api-points-board"),
    path("api/points/<str:name>/", PointSetApi.as_view(), name="api-point-set"),
    path(
        "api/points/<str:name>/judged/<str:judged_id>/",
        JudgedSetApi.as_view(),
        name="api-judged-set",
    ),
    path(
        "api/points/<str:name>/answer-sets/",
        AnswerSetsApi.as_view(),
        name="api-answer-sets",
    ),
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
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("admin/", admin.site.urls),
]

handler400 = "pitweb.core.errors.bad_request"
handler404 = "pitweb.core.errors.not_found"
handler500 = "pitweb.core.errors.server_error"
