/*
 * Every check kind, once. Adding one is a file lib/src/rules/checks/<name>.c defining
 * `const wg_check_kind wg_check_<name>` and a line here (and in CMakeLists.txt's glob, which
 * picks it up by itself).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
WG_CHECK(abi_mismatch)
WG_CHECK(abi_mixed)
WG_CHECK(hollow_wheel)
WG_CHECK(pure_with_binaries)
WG_CHECK(platform_without_binaries)
WG_CHECK(ext_interpreter)
WG_CHECK(elf_machine)
WG_CHECK(wheel_tags)
WG_CHECK(metadata_name)
WG_CHECK(python_target)
WG_CHECK(gpu_gencode_mismatch)
WG_CHECK(gpu_cannot_run)
WG_CHECK(gpu_ptx_too_new)
WG_CHECK(gpu_no_code)
WG_CHECK(cuda_runtime_major)
WG_CHECK(local_version)
WG_CHECK(record_mismatch)
WG_CHECK(record_missing)
WG_CHECK(record_unlisted)
WG_CHECK(unsafe_member)
WG_CHECK(unreadable)
WG_CHECK(ld_unresolved)
WG_CHECK(ld_missing_library)
WG_CHECK(ld_missing_version)
WG_CHECK(ld_python_assumed)
WG_CHECK(system_versions)
WG_CHECK(platform_tag_versions)
WG_CHECK(tightest_manylinux)
