from django.urls import path

from pitweb.board import api, views

urlpatterns = [
    path("benchmarks/", views.benchmarks_page, name="leaderboard"),
    path("benchmarks/<str:key>/", views.benchmark_page, name="benchmark"),
    path("benchmarks/<str:key>/leaderboard.csv", views.benchmark_csv, name="benchmark-csv"),
    path("benchmarks/<str:key>/chart.json", views.benchmark_chart, name="benchmark-chart"),
    # the board's old addresses, sent on to the benchmark they name
    path("leaderboard.csv", views.leaderboard_csv_page, name="leaderboard-csv"),
    path("leaderboard-chart.json", views.old_chart, name="leaderboard-chart"),
    path("families/<str:family_id>/", views.family_page, name="family"),
    path("snapshots/", views.snapshots_page, name="snapshots"),
    path("snapshots/publish", views.snapshot_publish_action, name="snapshot-publish"),
    path("snapshots/<str:snapshot_id>/", views.snapshot_page, name="snapshot"),
    path("snapshots/<str:snapshot_id>/signed.json", views.snapshot_signed, name="snapshot-signed"),
    path("compare/", views.compare_page, name="compare"),
    path("api/families/<str:family_id>/", api.FamilyApi.as_view(), name="api-family"),
    path("api/snapshots/", api.SnapshotsApi.as_view(), name="api-snapshots"),
    path("api/snapshots/<str:snapshot_id>/", api.SnapshotApi.as_view(), name="api-snapshot"),
    path("api/leaderboard/", api.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("api/leaderboard.csv", api.LeaderboardCsvApi.as_view(), name="api-leaderboard-csv"),
]
