// Opening a file beneath a folder without a race (docs/security.md, "A scenario"):
// the path is resolved by the kernel against the folder's descriptor, so a component
// swapped for a symlink between a check and the open cannot lead outside.
#pragma once
#include <string>

namespace tmakit::scenario {

// How the path is walked: the kernel's openat2(RESOLVE_BENEATH) (symlinks that stay
// inside are followed), or component by component with O_NOFOLLOW (no symlink is
// followed at all): the fallback where openat2 is missing (Linux before 5.6, some
// sandboxes), and what tests use to check that fallback.
enum class Walk { automatic, components };

// Opens `name` (relative) beneath the folder `dirfd` with `flags` (O_CLOEXEC is added).
// Returns the descriptor, or -errno: -EXDEV when the path leads outside the folder
// (an absolute path, a `..` too many, a symlink out of it or, with openat2, any absolute
// symlink), -ELOOP when the component walk meets a symlink, else open's own error.
int open_beneath(int dirfd, const std::string& name, int flags, Walk walk = Walk::automatic);

}  // namespace tmakit::scenario
