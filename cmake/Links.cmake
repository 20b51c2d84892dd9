# Who links what, written down for tests/modules/layers_test.py: each of the product's
# targets (the dispatchd_* libraries and the two executables) with every dispatchd_* target
# it links, directly or through others, one line each: "target: dep dep ...". The test holds
# the graph to the layering rules (the daemon never links the store's offline tools).

# The dispatchd_* targets `target` links, transitively, into the variable `out`.
function(dispatchd_link_closure target out)
  set(seen "")
  set(todo ${target})
  while(todo)
    list(POP_FRONT todo current)
    if(NOT TARGET ${current})
      continue()
    endif()
    get_target_property(direct ${current} LINK_LIBRARIES)
    get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
    foreach(dep IN LISTS direct interface)
      # A static library's private links reach its users as $<LINK_ONLY:name>.
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" dep "${dep}")
      if(dep MATCHES "^dispatchd" AND TARGET ${dep} AND NOT dep IN_LIST seen AND NOT dep STREQUAL target)
        list(APPEND seen ${dep})
        list(APPEND todo ${dep})
      endif()
    endforeach()
  endwhile()
  list(SORT seen)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Writes ${CMAKE_BINARY_DIR}/module_links.txt for the targets named.
function(dispatchd_write_links)
  set(text "")
  foreach(target IN LISTS ARGN)
    dispatchd_link_closure(${target} deps)
    list(JOIN deps " " deps)
    string(APPEND text "${target}: ${deps}\n")
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/module_links.txt "${text}")
endfunction()
