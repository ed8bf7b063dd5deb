# Upstream mirrors (registry/mirrors.py): where a mirrored skill and version came from.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0009_sso"),
    ]

    operations = [
        migrations.AddField(
            model_name="skill",
            name="upstream_url",
            field=models.CharField(blank=True, default="", max_length=512),
        ),
        migrations.AddField(
            model_name="skillversion",
            name="upstream_sha256",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="skillversion",
            name="upstream_url",
            field=models.CharField(blank=True, default="", max_length=1024),
        ),
    ]
