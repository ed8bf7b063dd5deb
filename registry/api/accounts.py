"""Organisations and members, tokens, and ``/me``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from registry import selectors, services
from registry.api.authentication import request_actor
from registry.api.serializers import (
    MemberIn,
    MemberOut,
    MembershipOut,
    OrgIn,
    TokenCreatedOut,
    TokenIn,
    TokenOut,
)
from registry.errors import Forbidden, Unauthenticated


def _signed_in(request):
    actor = request_actor(request)
    if not actor.is_authenticated:
        raise Unauthenticated("auth.required", "Sign in or send `Authorization: Bearer <token>`.")
    return actor


def _org_body(org, request) -> dict:
    body = {"name": org.name, "kind": org.kind, "created_at": org.created_at}
    members = selectors.owner_members_visible(actor=request_actor(request), owner=org)
    if members is not None:
        body["members"] = MemberOut(members, many=True).data
    return body


OrgOut = inline_serializer(
    "Org",
    {
        "name": serializers.CharField(),
        "kind": serializers.CharField(),
        "created_at": serializers.DateTimeField(),
        "members": MemberOut(many=True, required=False),
    },
)


class OrgList(APIView):
    @extend_schema(request=OrgIn, responses={201: OrgOut})
    def post(self, request):
        """Create an organisation; the creator becomes its owner."""
        form = OrgIn(data=request.data)
        form.is_valid(raise_exception=True)
        org = services.org_create(actor=request_actor(request), name=form.validated_data["name"])
        return Response(_org_body(org, request), status=status.HTTP_201_CREATED)


class OrgDetail(APIView):
    @extend_schema(responses=OrgOut)
    def get(self, request, org: str):
        """An organisation; members are listed to members only."""
        return Response(_org_body(selectors.owner_get(name=org), request))


class OrgMembers(APIView):
    @extend_schema(responses=MemberOut(many=True))
    def get(self, request, org: str):
        """An organisation's members and their roles (members only)."""
        owner = selectors.owner_get(name=org)
        members = selectors.owner_members_visible(actor=_signed_in(request), owner=owner)
        if members is None:
            raise Forbidden("permission.role", f"Only members of {org} (with a token valid for it) see its members.")
        return Response(MemberOut(members, many=True).data)

    @extend_schema(request=MemberIn, responses={201: MemberOut})
    def post(self, request, org: str):
        """Add a member or change their role (admin; only owners make owners)."""
        form = MemberIn(data=request.data)
        form.is_valid(raise_exception=True)
        membership = services.org_member_set(
            actor=request_actor(request), org=selectors.owner_get(name=org), **form.validated_data
        )
        return Response(MemberOut(membership).data, status=status.HTTP_201_CREATED)


class OrgMemberDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, org: str, username: str):
        """Remove a member (admin; an organisation keeps at least one owner)."""
        services.org_member_remove(actor=request_actor(request), org=selectors.owner_get(name=org), username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenList(APIView):
    @extend_schema(responses=TokenOut(many=True))
    def get(self, request):
        """Your tokens (never their secrets)."""
        return Response(TokenOut(selectors.token_list_visible(actor=_signed_in(request)), many=True).data)

    @extend_schema(request=TokenIn, responses={201: TokenCreatedOut})
    def post(self, request):
        """Create a token; its secret is in this response only."""
        form = TokenIn(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        owner = selectors.owner_get(name=data["owner"]) if data.get("owner") else None
        token, secret = services.token_create(
            actor=request_actor(request),
            scope=data["scope"],
            owner=owner,
            name=data["name"],
            expires_days=data.get("expires_days"),
        )
        return Response(TokenCreatedOut(token, context={"secret": secret}).data, status=status.HTTP_201_CREATED)


class TokenDetail(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request, token_id: int):
        """Revoke a token."""
        services.token_revoke(actor=request_actor(request), token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class Me(APIView):
    @extend_schema(
        responses=inline_serializer(
            "Me",
            {
                "username": serializers.CharField(),
                "owners": MembershipOut(many=True),
                "token": TokenOut(allow_null=True),
            },
        )
    )
    def get(self, request):
        """Who the request is authenticated as, their owners and roles, and the token used."""
        actor = _signed_in(request)
        services.user_owner_ensure(user=actor.user)
        return Response(
            {
                "username": actor.user.username,
                "owners": MembershipOut(selectors.user_memberships(user=actor.user), many=True).data,
                "token": TokenOut(actor.token).data if actor.token else None,
            }
        )
