#pragma once
// The only place the version number lives; CMake reads it from here.
#define FRENZY_VERSION_MAJOR 0
#define FRENZY_VERSION_MINOR 1
#define FRENZY_VERSION_PATCH 0
#define FRENZY_VERSION_STRING "0.1.0"

namespace frenzy {
inline constexpr int version_major = FRENZY_VERSION_MAJOR;
inline constexpr int version_minor = FRENZY_VERSION_MINOR;
inline constexpr int version_patch = FRENZY_VERSION_PATCH;
inline constexpr const char* version_string = FRENZY_VERSION_STRING;
}  // namespace frenzy
