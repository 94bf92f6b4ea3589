"""The reference prices' API: a release's reference-price versions, and staff
registering the next one (which re-scores every proven run of the release)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from pitweb.artifacts import spool
from pitweb.core.inputs import only_fields
from pitweb.pricing.services import IndexGiven, reference_prices_register
from pitweb.releases.models import ReferencePrices
from pitweb.releases.selectors import release_or_404
from pitweb.runs.uploads import FORMS

if TYPE_CHECKING:
    Serializer = serializers.Serializer[Any]
else:
    Serializer = serializers.Serializer


class IndexOut(Serializer):
    symbol = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]
    pulled_at = serializers.CharField()
    file_sha256 = serializers.CharField()
    levels = serializers.IntegerField()


class ReferencePricesOut(Serializer):
    release = serializers.CharField(source="release.content_digest")
    version = serializers.IntegerField()
    source = serializers.CharField()  # type: ignore[assignment]
    pulled_at = serializers.CharField()
    file_sha256 = serializers.CharField()
    basis = serializers.CharField()
    symbols = serializers.IntegerField()
    bars = serializers.IntegerField()
    reason = serializers.CharField()
    registered_at = serializers.DateTimeField()
    csv = serializers.SerializerMethodField()
    index = serializers.SerializerMethodField()

    @extend_schema_field(IndexOut(allow_null=True))
    def get_index(self, prices: ReferencePrices) -> dict[str, Any] | None:
        """The market index every run is measured against with this version (null: none)."""
        return prices.index_statement() if prices.index_symbol else None

    def get_csv(self, prices: ReferencePrices) -> str:
        """Where the file is downloaded, byte for byte (its sha256 is ``file_sha256``)."""
        return reverse("reference-prices-csv", args=[prices.release.digest_hex, prices.version])


class ReferencePricesIn(Serializer):
    prices = serializers.FileField()
    source = serializers.CharField(max_length=500)  # type: ignore[assignment]
    pulled_at = serializers.CharField(max_length=100, required=False, allow_blank=True)
    reason = serializers.CharField(max_length=2000)
    # the market index runs are measured against with these prices (all four, or none)
    index = serializers.FileField(required=False)
    index_symbol = serializers.CharField(max_length=200, required=False)
    index_source = serializers.CharField(max_length=500, required=False)
    index_pulled_at = serializers.CharField(max_length=100, required=False, allow_blank=True)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [k for k in ("index", "index_symbol", "index_source") if attrs.get(k)]
        if given and len(given) != 3:
            raise serializers.ValidationError(
                "an index needs its file, index_symbol and index_source together"
            )
        return attrs


class ReferencePricesApi(APIView):
    parser_classes = [MultiPartParser]
    throttle_scope = "staff_actions"

    def get_throttles(self) -> list[Any]:
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def get_permissions(self) -> list[Any]:
        if self.request.method == "POST":
            return [permissions.IsAdminUser()]
        return [permissions.AllowAny()]

    @extend_schema(
        responses=ReferencePricesOut(many=True),
        summary="A release's reference-price versions, newest first",
    )
    def get(self, request: Request, digest: str) -> Response:
        release = release_or_404(digest)
        versions = release.reference_prices.select_related("release").order_by("-version")
        return Response(ReferencePricesOut(versions, many=True).data)

    @extend_schema(
        request={"multipart/form-data": ReferencePricesIn},
        responses={201: ReferencePricesOut, 200: ReferencePricesOut},
        summary="Staff: register a price file as the release's next reference version "
        "(never edited) and re-score every proven run of the release",
    )
    def post(self, request: Request, digest: str) -> Response:
        release = release_or_404(digest)
        form = FORMS["api-reference-prices"]
        only_fields(request, files=form.files, data=form.data)
        given = ReferencePricesIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        local, _, _ = spool(data["prices"], settings.PITWEB_MAX_TRAJECTORY_BYTES, "prices")
        index_file = None
        try:
            index = None
            if data.get("index"):
                index_file, _, _ = spool(
                    data["index"], settings.PITWEB_MAX_TRAJECTORY_BYTES, "index"
                )
                index = IndexGiven(
                    index_file,
                    data["index_symbol"],
                    data["index_source"],
                    data.get("index_pulled_at", ""),
                )
            reference, created = reference_prices_register(
                release=release,
                path=local,
                source=data["source"],
                pulled_at=data.get("pulled_at", ""),
                staff=cast(User, request.user),  # IsAdminUser
                reason=data["reason"],
                index=index,
            )
        finally:
            local.unlink(missing_ok=True)
            if index_file is not None:
                index_file.unlink(missing_ok=True)
        return Response(
            ReferencePricesOut(reference).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
