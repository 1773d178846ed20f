# The README's install lines, each into a scratch prefix: the library from a clean build folder (`cmake -S . -B
# build-lib && cmake --install build-lib --component library`, nothing built), then tests/consumer configured, built
# and run against it; the whole build tree (`cmake --install DIR`: the CLI and, where built, the Python module), whose
# module then imports with the interpreter it was built for (PYTHON, the README's `import frenzy`).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build-lib OUTPUT_QUIET RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring a clean build folder (README: cmake -S . -B build-lib) failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK_DIR}/build-lib --component library --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the README's library install (--component library) failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix-all RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install of the build tree failed: ${rc}")
endif()
if(NOT EXISTS ${WORK_DIR}/prefix-all/bin/frenzy)
  message(FATAL_ERROR "cmake --install of the build tree installed no bin/frenzy")
endif()
if(DEFINED PYTHON)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${WORK_DIR}/prefix-all/${PYTHON_DIR} PYTHONDONTWRITEBYTECODE=1
                  ${PYTHON} -c "import frenzy; assert frenzy.estimate({'model': {'preset': 'gpt2'}}, gpu='a100-80g').fits; print('import frenzy', frenzy.__version__)"
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "the installed Python module does not import and estimate with ${PYTHON}: ${rc}")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DFRENZY_README=${SOURCE_DIR}/README.md RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
