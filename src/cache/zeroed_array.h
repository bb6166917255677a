// A fixed-size array whose elements start as all-zero bytes, allocated by calloc: the kernel
// maps a large one's pages only when first touched, so making one costs nothing per element (a
// std::vector writes every element, and the cache's open made one per slot: the entries a
// restart image leaves unread would have been paid for all the same). For trivially copyable
// aggregates whose all-zero bytes are their default value.
#pragma once

#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace flashdir::cache {

template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t size) : data_(allocate(size)), size_(size) {}

  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + size_; }
  const T* begin() const { return data_.get(); }
  const T* end() const { return data_.get() + size_; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  static T* allocate(std::size_t size) {
    if (size == 0) return nullptr;
    void* p = std::calloc(size, sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);  // an implicit-lifetime type: calloc's zero bytes are its objects
  }

  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace flashdir::cache
