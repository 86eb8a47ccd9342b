# Runs inside the template root (chroot) once per build: the unprivileged user
# that the agent runs commands as.
set -eu
groupadd --gid 1000 user
useradd --uid 1000 --gid 1000 --create-home --home-dir /home/user --shell /bin/bash user
# Agents install packages themselves, as on other sandbox platforms.
echo 'user ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/user
chmod 0440 /etc/sudoers.d/user
chown -R 1000:1000 /home/user
chmod 0755 /home/user
