#pragma once
// A vector of trivially copyable items that keeps its first N items inline and moves to the
// heap only beyond them. For per-reply scratch lists (keys, regions, brackets) whose typical
// size is small but whose worst case is bounded only by the reply size limit: the common
// case costs no allocation, the hostile case still works.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace dispatchd {

template <typename T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVector() = default;
  // Not copyable or movable: m_data may point into the object itself.
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;

  void push_back(const T& item) {
    if (m_size == m_capacity) grow();
    std::construct_at(m_data + m_size, item);
    ++m_size;
  }
  void pop_back() { --m_size; }
  // Keeps the first `size` items. REQUIRES: size <= this->size().
  void truncate(std::size_t size) { m_size = size; }
  void clear() { m_size = 0; }

  std::size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  T& operator[](std::size_t i) { return m_data[i]; }
  const T& operator[](std::size_t i) const { return m_data[i]; }
  T& back() { return m_data[m_size - 1]; }
  const T& back() const { return m_data[m_size - 1]; }
  T* begin() { return m_data; }
  T* end() { return m_data + m_size; }
  const T* begin() const { return m_data; }
  const T* end() const { return m_data + m_size; }

 private:
  void grow() {
    const std::size_t capacity = 2 * m_capacity;
    auto heap = std::make_unique_for_overwrite<T[]>(capacity);
    std::copy(m_data, m_data + m_size, heap.get());
    m_heap = std::move(heap);
    m_data = m_heap.get();
    m_capacity = capacity;
  }

  // Room for N items, none constructed until pushed: a reply's scratch lists cost nothing
  // to set up.
  union Inline {
    Inline() {}
    T items[N];
  } m_inline;
  std::unique_ptr<T[]> m_heap;
  T* m_data = m_inline.items;
  std::size_t m_size = 0;
  std::size_t m_capacity = N;
};

}  // namespace dispatchd
