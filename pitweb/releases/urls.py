from django.urls import path

from pitweb.releases import views

urlpatterns = [
    path("releases/register/", views.release_register_page, name="release-register"),
    path("releases/<str:digest>/", views.release_page, name="release"),
    path("releases/<str:digest>/archive.tar", views.release_archive, name="release-archive"),
    path(
        "releases/<str:digest>/prices/v<str:version>.csv",
        views.reference_prices_csv,
        name="reference-prices-csv",
    ),
]
