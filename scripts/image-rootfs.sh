#!/usr/bin/env bash
#
# image-rootfs.sh DIR: stage in DIR what Dockerfile.server copies next to
# bin/berth into its FROM scratch image: the CA bundle and the time zone data
# of this (Debian) host, minimal passwd/group files naming the unprivileged
# user 65532, and empty /data, /tmp and home directories; and restic and ssh
# at their Debian paths (/usr/bin) with the shared libraries they need (ldd),
# at the paths this host has them: Berth packs them into its backup image
# (server/internal/backup), which runs next to the data backed up.
#
# No base image can be pulled here, so the image is put together from files of
# the host; Debian's ca-certificates, tzdata, restic and openssh-client are
# installed when missing.
set -euo pipefail

dir=${1:?usage: image-rootfs.sh DIR}
ca=/etc/ssl/certs/ca-certificates.crt
zoneinfo=/usr/share/zoneinfo

missing=()
[[ -s $ca ]] || missing+=(ca-certificates)
[[ -e $zoneinfo/UTC ]] || missing+=(tzdata)
[[ -x /usr/bin/restic ]] || missing+=(restic)
[[ -x /usr/bin/ssh ]] || missing+=(openssh-client)
if ((${#missing[@]})); then
	if [[ $(id -u) != 0 ]]; then
		echo "image-rootfs.sh: install ${missing[*]} (Debian packages) first" >&2
		exit 1
	fi
	echo "==> installing ${missing[*]}" >&2
	apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
fi

# Rebuilt from scratch each time: nothing stale reaches the image.
rm -rf "$dir"
mkdir -p "$dir/rootfs/etc/ssl/certs" "$dir/rootfs/usr/share" "$dir/rootfs/usr/bin" "$dir/rootfs/tmp" "$dir/rootfs/home"
cp "$ca" "$dir/rootfs/etc/ssl/certs/ca-certificates.crt"
cp -a "$zoneinfo" "$dir/rootfs/usr/share/zoneinfo"
chmod 1777 "$dir/rootfs/tmp"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
	'berth:x:65532:65532:berth:/home/berth:/sbin/nologin' >"$dir/rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'berth:x:65532:' >"$dir/rootfs/etc/group"
# restic and ssh, and what they load: each library at the path ldd resolves it
# to, the interpreter at the path the program names (copies, links followed).
for program in /usr/bin/restic /usr/bin/ssh; do
	cp "$program" "$dir/rootfs$program"
	ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u |
		while read -r lib; do
			mkdir -p "$dir/rootfs$(dirname "$lib")"
			cp -L "$lib" "$dir/rootfs$lib"
		done
done
# Copied with --chown=65532:65532: the server's data directory and its home.
mkdir -p "$dir/data" "$dir/home-berth"
