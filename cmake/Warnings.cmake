# dispatchd_warnings: the warning set every target builds with; -Werror only when asked
# (CI), so that a newer compiler's new warning never breaks a user's build.
add_library(dispatchd_warnings INTERFACE)
target_compile_options(dispatchd_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  # Every struct member has a default initializer, so a designated initializer that leaves
  # some out is intended; GCC 12 warns about it under -Wextra all the same.
  -Wno-missing-field-initializers)
if(DISPATCHD_WERROR)
  target_compile_options(dispatchd_warnings INTERFACE -Werror)
endif()

# Adds a static library for one module folder with the project's settings and warnings.
# The module's own files (only they) may include its `internal/` headers: each of those
# refuses to compile without DISPATCHD_INTERNAL_<FOLDER>, defined PRIVATE here.
function(dispatchd_module name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE dispatchd_warnings PUBLIC dispatchd_settings)
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  string(TOUPPER ${folder} folder)
  target_compile_definitions(${name} PRIVATE DISPATCHD_INTERNAL_${folder})
  dispatchd_unity(${name})
  # cmake/Links.cmake writes who links what for every module.
  set_property(GLOBAL APPEND PROPERTY DISPATCHD_MODULES ${name})
endfunction()
