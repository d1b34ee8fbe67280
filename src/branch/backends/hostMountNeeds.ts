/** What a machine needs for branch paths that every tool can use. */
export const HOST_MOUNT_NEEDS = 'mounting where other tools see it needs root, or fuse-overlayfs and fusermount3 with a /dev/fuse this user may open'
