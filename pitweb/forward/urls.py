from django.urls import path

from pitweb.forward import api, views

# permalinks: a commitment's page is its entry's number in the log, which never changes
urlpatterns = [
    path("forward/", views.forward_page, name="forward"),
    path("forward/board/", views.forward_board_page, name="forward-board"),
    path("forward/log.json", views.log_json, name="forward-log"),
    path("forward/log/head.json", views.head_json, name="forward-log-head"),
    path("forward/log/head.signed.json", views.head_signed_json, name="forward-log-head-signed"),
    path("forward/commit/", views.commit_page, name="forward-commit"),
    path("forward/commitments/<str:seq>/", views.commitment_page, name="forward-commitment"),
    path(
        "forward/commitments/<str:seq>/withdraw",
        views.withdraw_action,
        name="forward-withdraw",
    ),
    path("api/commitments/", api.CommitmentsApi.as_view(), name="api-commitments"),
    path("api/commitments/log/", api.LogApi.as_view(), name="api-commitments-log"),
    path(
        "api/commitments/<str:seq>/withdraw/",
        api.WithdrawApi.as_view(),
        name="api-commitment-withdraw",
    ),
]
