package words

import "strconv"

// Count writes n and noun, made plural by an s unless n is 1.
func Count[T ~int | ~int32 | ~int64 | ~uint | ~uint32 | ~uint64](n T, noun string) string {
	s := strconv.FormatInt(int64(n), 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
