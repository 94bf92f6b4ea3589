from django.urls import path

from pitweb.pricing import api

urlpatterns = [
    path(
        "api/releases/<str:digest>/prices/",
        api.ReferencePricesApi.as_view(),
        name="api-reference-prices",
    ),
]
