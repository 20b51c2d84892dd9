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
