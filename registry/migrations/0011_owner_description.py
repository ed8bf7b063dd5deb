# Owners describe themselves on their page and in the publishers index (issue 38 item 11).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0010_upstream_origin"),
    ]

    operations = [
        migrations.AddField(
            model_name="owner",
            name="description",
            field=models.CharField(blank=True, default="", max_length=500),
        ),
    ]
