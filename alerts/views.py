"""Alert pages live in alerts/web/; these names stay importable."""

from alerts.web.dashboard import overview_page, root
from alerts.web.group import alert_group_page
from alerts.web.team import team_page

__all__ = ["alert_group_page", "overview_page", "root", "team_page"]
