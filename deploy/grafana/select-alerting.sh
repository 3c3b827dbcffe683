#!/bin/sh
# Fills Grafana's alerting provisioning directory with Kalypso's alert rules, and — only when
# KALYPSO_ALERT_WEBHOOK_URL is set — the "Kalypso" contact point they are then sent to.
#
#   select-alerting.sh PROVISIONING_DIR TARGET_DIR
#
# PROVISIONING_DIR holds alerting/ and alerting-webhook/ (deploy/grafana/provisioning/, or the
# ConfigMaps mounted as such); TARGET_DIR is Grafana's provisioning/alerting directory. Run it before
# Grafana starts (the Grafana Deployment's init container does), with Grafana's environment.
#
# Why a script: Grafana expands an unset variable to "", and an empty webhook url, or a rule sent to
# a contact point that is not provisioned, fails provisioning — and then Grafana does not start. So
# the contact point and the routed rules are provisioned only when the URL is there; without it the
# rules still evaluate and show in Grafana, and nothing is sent. A URL or type that is set but wrong
# stops here, saying why, rather than being dropped silently.
#
# KALYPSO_ALERT_WEBHOOK_TYPE: webhook (Grafana's JSON, any receiver), slack (an incoming webhook) or
# teams (a Teams incoming webhook or workflow); unset, it follows from the URL's host.
set -eu

if [ "$#" -ne 2 ]; then
  echo "usage: select-alerting.sh PROVISIONING_DIR TARGET_DIR" >&2
  exit 2
fi
from=$1
to=$2

# Only *.yaml: Grafana refuses to start on any other file in its alerting directory.
rm -f "$to"/*.yaml
cp "$from"/alerting/*.yaml "$to"/

url=${KALYPSO_ALERT_WEBHOOK_URL:-}
if [ -z "$url" ]; then
  echo "kalypso alerting: KALYPSO_ALERT_WEBHOOK_URL is not set: the alert rules evaluate in Grafana and no contact point is provisioned (nothing is sent)"
  exit 0
fi

case "$url" in
  http://* | https://*) ;;
  *)
    echo "kalypso alerting: KALYPSO_ALERT_WEBHOOK_URL must be an http(s) URL" >&2
    exit 1
    ;;
esac

type=${KALYPSO_ALERT_WEBHOOK_TYPE:-}
if [ -z "$type" ]; then
  host=${url#*://}
  host=${host%%/*}
  case "$host" in
    hooks.slack.com) type=slack ;;
    *.webhook.office.com | *.logic.azure.com | *.powerplatform.com) type=teams ;;
    *) type=webhook ;;
  esac
fi
case "$type" in
  webhook | slack | teams) ;;
  *)
    echo "kalypso alerting: KALYPSO_ALERT_WEBHOOK_TYPE=$type: must be webhook, slack or teams" >&2
    exit 1
    ;;
esac

cp "$from"/alerting-webhook/kalypso-alerts.yaml "$to"/kalypso-alerts.yaml
cp "$from/alerting-webhook/contact-point-$type.yaml" "$to"/kalypso-contact-point.yaml
# The URL is a secret (it posts into a channel): it stays in the environment, never in a file or the log.
echo "kalypso alerting: the alert rules are sent to the Kalypso contact point ($type)"
