# Runs inside the template root (chroot) at the end of a build. The root is a
# read-only lower layer shared by every sandbox, so everything is done here.
set -eu
# Placeholders; each sandbox gets its own copies in its writable layer.
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > /etc/hosts
echo sandbox > /etc/hostname
printf '# Written per sandbox by Sandpit.\n' > /etc/resolv.conf
# C.UTF-8 ships with libc; no locales package needed.
echo 'LANG=C.UTF-8' > /etc/default/locale
echo 'LANG=C.UTF-8' > /etc/environment
printf 'export LANG=C.UTF-8\n' > /etc/profile.d/sandpit.sh
# pip installs are expected to work in a throwaway sandbox (PEP 668 marker off).
rm -f /usr/lib/python3*/EXTERNALLY-MANAGED
chmod 1777 /tmp /var/tmp
# Mount points the runtime binds over, present so no sandbox has to create them.
mkdir -p /run/sandpit /.sandpit
: > /.sandpit/agent
chmod 0755 /.sandpit/agent
# Smaller template: downloaded debs are not needed after install.
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/*.log /var/log/apt/*
