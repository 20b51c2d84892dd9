# dispatchd_settings: language level and sanitizer flags, linked by every target so that
# one place decides how the whole tree is compiled.
set(CMAKE_CXX_STANDARD 23)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)

add_library(dispatchd_settings INTERFACE)
if(DISPATCHD_SANITIZE)
  target_compile_options(dispatchd_settings INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(dispatchd_settings INTERFACE -fsanitize=address,undefined)
endif()

# Unity builds: the files of a target are compiled DISPATCHD_UNITY_BATCH at a time as one
# translation unit, so the Asio, Beast, Catch2 and standard library templates they share
# are instantiated and compiled once per batch instead of once per file (most of a file's
# compile time here is that code generation, not parsing). It is what makes a clean build
# fit in minutes on two cores (BENCHMARKS.md, "Building and testing from a clean clone").
# The price: names local to a file (anonymous namespaces) must differ between the files of
# a target. 0 or 1 compiles each file alone, e.g. to rebuild one edited file quickly.
set(DISPATCHD_UNITY_BATCH 8 CACHE STRING "Source files compiled together per unity batch (0 or 1: each alone)")
function(dispatchd_unity target)
  if(DISPATCHD_UNITY_BATCH GREATER 1)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${DISPATCHD_UNITY_BATCH})
    # In a batch every .cpp is an included file, so g++ takes a class holding a member of a
    # file-local (anonymous namespace) type for a header's, which it warns about; here the
    # class is as file-local as its member.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()
