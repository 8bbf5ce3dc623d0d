#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Checks that a team can consume a release without this repository: deploys the published modules
# with the release profile to a file repository, then builds and tests examples/consumer (a user's
# project on the published coordinates) against that repository from an EMPTY local repository, so
# nothing of this project can come from the reactor or from an earlier `install`.
#
#   scripts/check-release.sh [REPO_DIR]     # default: target/release-repo
#   SKIP_DEPLOY=1 scripts/check-release.sh   # REPO_DIR already holds this version (.ci/run deploys it)
#   DEPLOY_ARGS="-Dmaven.repo.local=/tmp/m2" scripts/check-release.sh   # extra flags for the deploy only
#
# Third-party artifacts (Maven's plugins, JUnit, jqwik) come from Maven Central, as they would for
# the team. Exit 0 only if the consumer's build passed and every dev.metrale artifact it used was
# resolved from REPO_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repo=${1:-$root/target/release-repo}
mkdir -p "$repo"
repo=$(cd "$repo" && pwd)
version=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' pom.xml | head -1)

if [ "${SKIP_DEPLOY:-0}" != 1 ]; then
  rm -rf "$repo" && mkdir -p "$repo"
  # shellcheck disable=SC2086
  ./mvnw -B -ntp -Prelease deploy -DskipTests -DaltDeploymentRepository="release::file://$repo" ${DEPLOY_ARGS:-}
fi

for a in metrale-gpu-parent metrale-gpu-bom metrale-telemetry metrale-gpu metrale-gpu-sim metrale-gpu-cuda \
         metrale-gpu-nccl metrale-gpu-testing; do
  [ -e "$repo/dev/metrale/$a/$version/$a-$version.pom" ] || { echo "check-release: $a $version is not in $repo" >&2; exit 1; }
done
for a in metrale-examples metrale-benchmarks metrale-gpu-contract metrale-gpu-docs; do
  [ ! -e "$repo/dev/metrale/$a" ] || { echo "check-release: $a is not published, but $repo holds it" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/metrale-release-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/m2"
# The release repository is the one place a dev.metrale artifact can come from: the local
# repository starts empty, and -s replaces the user's settings (and any mirror of a repository
# that might hold an installed copy).
cat > "$work/settings.xml" <<XML
<settings>
  <profiles>
    <profile>
      <id>metrale-release</id>
      <repositories>
        <repository>
          <id>metrale-release</id>
          <url>file://$repo</url>
          <snapshots><enabled>false</enabled></snapshots>
        </repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>metrale-release</activeProfile></activeProfiles>
</settings>
XML
cp -r examples/consumer "$work/consumer"
rm -rf "$work/consumer/target"
./mvnw -B -ntp -s "$work/settings.xml" -Dmaven.repo.local="$work/m2" -f "$work/consumer/pom.xml" \
  -Dmetrale.version="$version" verify

used=$(find "$work/m2/dev/metrale" -name '_remote.repositories' | sort)
[ -n "$used" ] || { echo "check-release: the consumer resolved no dev.metrale artifact" >&2; exit 1; }
bad=0
for f in $used; do
  if ! grep -q '>metrale-release=' "$f"; then
    echo "check-release: $(dirname "${f#"$work/m2/"}") did not come from $repo" >&2
    bad=1
  fi
done
[ "$bad" = 0 ] || exit 1
echo "check-release: examples/consumer built and passed against $repo ($(echo "$used" | wc -l) dev.metrale artifacts, all from it)"
