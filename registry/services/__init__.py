"""Every write of the registry (HackSoftware style: ``<entity>_<verb>``, keyword-only).

Views, serializers, commands and tasks call these; none of them writes models directly.
"""

from registry.services.accounts import (
    org_create,
    org_member_remove,
    org_member_set,
    owner_describe,
    token_authenticate,
    token_create,
    token_revoke,
    user_create,
    user_owner_ensure,
)
from registry.services.advisories import advisory_create, advisory_may_file, advisory_withdraw
from registry.services.audit import audit_record
from registry.services.checks import (
    check_fail,
    check_finish,
    check_rerun,
    check_start,
    checks_create,
    checks_rescan,
    checks_reset,
    checks_sweep,
    skill_version_vector_set,
)
from registry.services.publish import (
    PublishResult,
    skill_version_publish,
    skill_version_upload_check,
)
from registry.services.versions import (
    skill_delete,
    skill_dist_tag_remove,
    skill_dist_tag_set,
    skill_version_delete,
    skill_version_deprecate,
    skill_version_download_record,
    skill_version_unyank,
    skill_version_yank,
)

__all__ = [
    "PublishResult",
    "advisory_create",
    "advisory_may_file",
    "advisory_withdraw",
    "audit_record",
    "check_fail",
    "check_finish",
    "check_rerun",
    "check_start",
    "checks_create",
    "checks_rescan",
    "checks_reset",
    "checks_sweep",
    "org_create",
    "org_member_remove",
    "org_member_set",
    "owner_describe",
    "skill_delete",
    "skill_dist_tag_remove",
    "skill_dist_tag_set",
    "skill_version_delete",
    "skill_version_deprecate",
    "skill_version_download_record",
    "skill_version_publish",
    "skill_version_upload_check",
    "skill_version_vector_set",
    "skill_version_unyank",
    "skill_version_yank",
    "token_authenticate",
    "token_create",
    "token_revoke",
    "user_create",
    "user_owner_ensure",
]
