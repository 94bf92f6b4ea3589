from django.urls import path

from pitweb.releases import views

urlpatterns = [
    path("releases/<str:digest>/", views.release_page, name="release"),
]
