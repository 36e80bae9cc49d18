# SPDX-License-Identifier: GPL-3.0-or-later
# -DWG_PORTABLE=ON (CMakeLists.txt includes this file): the build the manylinux wheel is made of
# (target portable-wheel, docs/install.md). The dependencies Debian 12 ships a static archive
# of, whose own dependencies have archives too, are linked statically; the others stay shared
# and scripts/python-wheel.py --portable copies them into the wheel (wheelgate.libs/) the way
# auditwheel does. What stays shared, and why:
#   libzip         no libzip.a in Debian 12
#   libisal        no libisal.a in Debian 12 (libisal-dev ships libisal.so only); libisal.so.2
#                  needs only glibc 2.4
#   libcurl        libcurl.a needs nghttp2, librtmp, libssh2, libpsl, GSSAPI and OpenLDAP:
#                  none has an archive
#   libmicrohttpd  libmicrohttpd.a needs GnuTLS, whose libgnutls.a needs p11-kit and
#                  libunistring: no archive
#   libjansson     libjansson.a and libsframe.a (which libbfd.a needs) are built as -fPIE, not
#   libsframe      -fPIC: their R_X86_64_PC32 relocations against stdin/stderr cannot go
#                  into a shared object (libwheelgate.so)
#   libxml2        libxml2.a is not position-independent (R_X86_64_PC32 against stderr in
#                  error.o): it cannot go into the fetch module; it needs ICU and liblzma too
# Static archives linked into a shared object or an executable export nothing
# (--exclude-libs,ALL): the library is loaded into Python processes that also load the
# system's libcrypto, libz and libxml2. The wheel needs of the system only what the manylinux
# policy allows (glibc's libraries, libstdc++, libgcc_s, libz).

# Replaces a pkg-config imported target's libraries by static archives (by file name, so that
# a shared library of the same name is never taken), followed by system libraries (-l).
function(wg_portable_static target)
  cmake_parse_arguments(A "" "" "ARCHIVES;SYSTEM" ${ARGN})
  set(libs)
  foreach(n IN LISTS A_ARCHIVES)
    find_library(WG_ARCHIVE_${n} NAMES lib${n}.a REQUIRED)
    list(APPEND libs ${WG_ARCHIVE_${n}})
  endforeach()
  list(APPEND libs ${A_SYSTEM})
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES "${libs}")
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_OPTIONS "")
endfunction()

wg_portable_static(PkgConfig::PCRE2 ARCHIVES pcre2-8)
wg_portable_static(PkgConfig::YAML ARCHIVES yaml)
wg_portable_static(PkgConfig::LIBCRYPTO ARCHIVES crypto SYSTEM ${CMAKE_DL_LIBS} Threads::Threads)
wg_portable_static(PkgConfig::ZSTD ARCHIVES zstd)
wg_portable_static(PkgConfig::LZ4 ARCHIVES lz4)
wg_portable_static(PkgConfig::DEFLATE ARCHIVES deflate)
# libbfd.a needs libsframe (shared, see above), libiberty (built into libbfd.so), zlib and zstd.
foreach(n bfd iberty zstd z csv)
  find_library(WG_ARCHIVE_${n} NAMES lib${n}.a REQUIRED)
endforeach()
find_library(WG_SFRAME_LIBRARY NAMES sframe REQUIRED)
set(BFD_LIBRARY ${WG_ARCHIVE_bfd} ${WG_SFRAME_LIBRARY} ${WG_ARCHIVE_iberty} ${WG_ARCHIVE_zstd}
  ${WG_ARCHIVE_z})
set(CSV_LIBRARY ${WG_ARCHIVE_csv})
# toml++ header-only (Debian's libtomlplusplus.so.3 has no archive and needs libstdc++.so.6).
set_property(TARGET PkgConfig::TOMLPP PROPERTY INTERFACE_LINK_LIBRARIES "")
set_property(TARGET PkgConfig::TOMLPP PROPERTY INTERFACE_COMPILE_OPTIONS "")
set_property(TARGET PkgConfig::TOMLPP PROPERTY INTERFACE_COMPILE_DEFINITIONS TOML_HEADER_ONLY=1)
# Nothing of an archive is exported. libstdc++ and libgcc stay shared (the policy allows
# them): GCC 12's libstdc++.a calls arc4random (GLIBC_2.36, through std::random_device) and its
# libgcc_eh.a _dl_find_object (GLIBC_2.35), both newer than manylinux_2_34 allows.
add_link_options(-Wl,--exclude-libs,ALL)
# libxml2.so.2 needs libicuuc, whose Debian 12 build needs GLIBCXX_3.4.30 (manylinux_2_35):
# the wheel carries cli/portable/icu_stub.c under ICU's soname instead (see there).
pkg_check_modules(ICUUC REQUIRED icu-uc)
string(REGEX MATCH "^[0-9]+" WG_ICU_MAJOR "${ICUUC_VERSION}")
add_library(wg_icu_stub SHARED cli/portable/icu_stub.c)
set_target_properties(wg_icu_stub PROPERTIES C_VISIBILITY_PRESET hidden
  NO_SONAME OFF LINK_FLAGS "-Wl,-soname,libicuuc.so.${WG_ICU_MAJOR}")
target_compile_options(wg_icu_stub PRIVATE ${WG_WARNINGS})
target_compile_definitions(wg_icu_stub PRIVATE WG_ICU_SUFFIX=${WG_ICU_MAJOR})
# python-wheel.py --portable: a system library the wheel replaces by one of its build
set(WG_WHEEL_REPLACE --replace libicuuc.so.${WG_ICU_MAJOR}=$<TARGET_FILE:wg_icu_stub>)
# scripts/wheel_vendor.py rewrites the copied libraries with patchelf and reads them with readelf.
find_program(WG_PATCHELF patchelf REQUIRED)
find_program(WG_READELF readelf REQUIRED)
