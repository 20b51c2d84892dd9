#!/usr/bin/env bash
# Builds dispatchd's Debian package (debian/) on a Debian 12 machine, installing what it
# needs, and checks it with lintian. The .deb and its .changes land in build-deb/.
#
#   scripts/package.sh            build and lint
#
# The version is CHANGELOG.md's newest release; when its "Unreleased" section has entries,
# "+gitN" is added (N: the commits on this branch), so a build of main sorts after the release
# it grew from. debian/changelog is written here from it, not kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bash scripts/install-deps.sh
need=()
for p in debhelper dpkg-dev lintian bash-completion scdoc; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "package: installing ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

release=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' CHANGELOG.md | head -n 1)
unreleased=$(awk '/^## Unreleased/ { on = 1; next } /^## / { on = 0 } on && /^- / { n++ } END { print n + 0 }' CHANGELOG.md)
version=$release
if [ "$unreleased" -gt 0 ]; then
  version="$release+git$(git rev-list --count HEAD 2>/dev/null || echo 0)"
fi
when=$(git log -1 --format=%aD 2>/dev/null || date -R)

# A copy of the tree as git sees it (tracked files, with their uncommitted changes): the
# package is built from the sources, never from a build folder lying around.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/dispatchd-$version"
mkdir -p "$src"
git ls-files -z | xargs -0 cp --parents -t "$src"
cat > "$src/debian/changelog" <<CHANGES
dispatchd ($version) unstable; urgency=medium

  * Built from the sources; see /usr/share/doc/dispatchd/CHANGELOG.md.

 -- dispatchd developers <dispatchd@example.org>  $when
CHANGES

(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)" >"$work/build.log" 2>&1) || {
  tail -n 60 "$work/build.log" >&2
  echo "package: dpkg-buildpackage failed (the log's end is above)" >&2
  exit 1
}
mkdir -p "$root/build-deb"
rm -f "$root"/build-deb/dispatchd*
cp "$work"/dispatchd*_"$version"_* \
  "$root/build-deb/"
deb=$(ls "$root"/build-deb/dispatchd_"$version"_*.deb)
echo "package: $deb"
lintian --fail-on warning --info "$root"/build-deb/dispatchd_"$version"_*.changes
echo "package: lintian found nothing at warning level or above"
