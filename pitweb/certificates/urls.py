from django.urls import path

from pitweb.certificates import views

urlpatterns = [
    path(".well-known/pitweb-keys.json", views.keys_json, name="signing-keys"),
    path(".well-known/pitweb-revocations.json", views.revocations_json, name="revocations"),
    path("runs/<str:sha>/certificate.json", views.run_certificate_json, name="run-certificate"),
    path("certificates/<str:certificate_id>.json", views.certificate_json, name="certificate"),
    path(
        "certificates/<str:certificate_id>/revoke", views.revoke_action, name="certificate-revoke"
    ),
]
