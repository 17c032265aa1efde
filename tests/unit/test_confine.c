/* test_confine.c: the pure parts of the mount-namespace confinement
 * (confine.h): the mount point of a /proc/self/mountinfo line, escapes
 * decoded; the flags a read-only remount repeats; the --confinement words;
 * how each mode is described. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include "base/confine.h"

static void mountinfo_point_is_the_fifth_field(void **state)
{
	char p[64];

	(void)state;
	assert_int_equal(cb_confine_mountinfo_point("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n", p, sizeof(p)), 0);
	assert_string_equal(p, "/");
	assert_int_equal(cb_confine_mountinfo_point("25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw", p, sizeof(p)), 0);
	assert_string_equal(p, "/dev/shm");
	/* a bind mount: the fourth field is the root within its file system */
	assert_int_equal(cb_confine_mountinfo_point("66 46 254:0 /tmp/a /srv/b rw - ext4 /dev/vda rw", p, sizeof(p)), 0);
	assert_string_equal(p, "/srv/b");
	/* the kernel escapes space, tab, newline and backslash as \ooo */
	assert_int_equal(cb_confine_mountinfo_point("30 27 0:5 / /mnt/my\\040disk\\011x\\134y rw - ext4 sda rw", p,
						    sizeof(p)), 0);
	assert_string_equal(p, "/mnt/my disk\tx\\y");
	/* a backslash without three octal digits is kept as it is */
	assert_int_equal(cb_confine_mountinfo_point("30 27 0:5 / /a\\9b rw - ext4 sda rw", p, sizeof(p)), 0);
	assert_string_equal(p, "/a\\9b");
}

static void mountinfo_point_refuses_short_lines(void **state)
{
	char p[8];

	(void)state;
	assert_int_equal(cb_confine_mountinfo_point("27 1 254:0 /", p, sizeof(p)), -1);
	assert_int_equal(cb_confine_mountinfo_point("27 1 254:0 / ", p, sizeof(p)), -1);
	assert_int_equal(cb_confine_mountinfo_point("", p, sizeof(p)), -1);
	/* a point that does not fit (with its NUL) is refused, never cut */
	assert_int_equal(cb_confine_mountinfo_point("1 2 0:1 / /a/long/path rw", p, sizeof(p)), -1);
	assert_int_equal(cb_confine_mountinfo_point("1 2 0:1 / /seven7 rw", p, sizeof(p)), 0);
	assert_string_equal(p, "/seven7");
}

static void remount_keeps_the_locked_flags(void **state)
{
	const unsigned long base = MS_BIND | MS_REMOUNT | MS_RDONLY;

	(void)state;
	assert_int_equal(cb_confine_remount_flags(0), base);
	assert_int_equal(cb_confine_remount_flags(ST_NOSUID | ST_NODEV), base | MS_NOSUID | MS_NODEV);
	assert_int_equal(cb_confine_remount_flags(ST_NOEXEC | ST_RELATIME), base | MS_NOEXEC | MS_RELATIME);
	assert_int_equal(cb_confine_remount_flags(ST_NOATIME | ST_NODIRATIME), base | MS_NOATIME | MS_NODIRATIME);
	/* read-only already, or flags a remount has no say in: still a read-only bind remount */
	assert_int_equal(cb_confine_remount_flags(ST_RDONLY | ST_SYNCHRONOUS | ST_MANDLOCK), base);
}

static void modes_by_word_and_description(void **state)
{
	struct cb_confine c;
	char how[CB_CONFINE_HOW_MAX];

	(void)state;
	assert_int_equal(cb_confine_mode_parse("auto"), CB_CONFINE_AUTO);
	assert_int_equal(cb_confine_mode_parse("landlock"), CB_CONFINE_LANDLOCK);
	assert_int_equal(cb_confine_mode_parse("namespace"), CB_CONFINE_NAMESPACE);
	assert_int_equal(cb_confine_mode_parse("off"), CB_CONFINE_OFF);
	assert_int_equal(cb_confine_mode_parse("Namespace"), -1);
	assert_int_equal(cb_confine_mode_parse(""), -1);
	memset(&c, 0, sizeof(c));
	c.mode = CB_CONFINE_NAMESPACE;
	cb_confine_describe(&c, how, sizeof(how));
	assert_string_equal(how, "confined (mount namespace)");
	assert_string_equal(cb_confine_mode_name(c.mode), "namespace");
	assert_int_equal(cb_confine_code(&c), CB_CONFINE_NS);
	c.mode = CB_CONFINE_LANDLOCK;
	c.abi = 7;
	cb_confine_describe(&c, how, sizeof(how));
	assert_string_equal(how, "confined (landlock ABI 7)");
	assert_int_equal(cb_confine_code(&c), 7);
	/* --no-confinement: off, said, and the wrapper told 0 */
	cb_confine_probe(CB_CONFINE_OFF, &c);
	cb_confine_describe(&c, how, sizeof(how));
	assert_string_equal(how, "not confined: --no-confinement");
	assert_string_equal(cb_confine_mode_name(c.mode), "off");
	assert_int_equal(cb_confine_code(&c), 0);
	assert_int_equal(c.unavailable, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mountinfo_point_is_the_fifth_field),
		cmocka_unit_test(mountinfo_point_refuses_short_lines),
		cmocka_unit_test(remount_keeps_the_locked_flags),
		cmocka_unit_test(modes_by_word_and_description),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
