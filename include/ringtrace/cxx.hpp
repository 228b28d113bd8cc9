/* SPDX-License-Identifier: MIT */
/*
 * The C++ API over the C calls (ringtrace.hpp without RINGTRACE_DISABLE). Do not include directly:
 * include <ringtrace.hpp>, which documents every name here.
 */
#ifndef RINGTRACE_CXX_HPP
#define RINGTRACE_CXX_HPP

#ifndef RINGTRACE_HPP
#error "include <ringtrace.hpp>, not <ringtrace/cxx.hpp>"
#endif

namespace ringtrace
{

/* The C struct of each argument, with the copied views NUL-terminated in a buffer
 * that lives as long as this object. */
struct detail_access {
	template <std::size_t N> class packed
	{
	      public:
		explicit packed(const arg *in) noexcept
		{
			std::size_t need = 0;
			for (std::size_t i = 0; i < N; i++)
				if (in[i].type_ == arg::kView)
					need += clip(in[i].v_.sv.n) + 1;
			char *buf = small_;
			if (need > sizeof(small_))
				buf = big_ = new (std::nothrow) char[need];
			for (std::size_t i = 0; i < N; i++) {
				rtr_arg &o = out_[i];
				o = rtr_arg();
				o.key = in[i].key_;
				o.type = in[i].type_;
				switch (in[i].type_) {
				case RTR_ARG_TYPE_BOOL:
					o.v.b = in[i].v_.b;
					break;
				case RTR_ARG_TYPE_I64:
					o.v.i64 = in[i].v_.i;
					break;
				case RTR_ARG_TYPE_U64:
					o.v.u64 = in[i].v_.u;
					break;
				case RTR_ARG_TYPE_F64:
					o.v.f64 = in[i].v_.f;
					break;
				case arg::kView:
					o.type = RTR_ARG_TYPE_STR_COPY;
					o.v.str = nullptr; /* no memory for the copy: left out */
					if (buf != nullptr) {
						std::size_t n = clip(in[i].v_.sv.n);
						std::memcpy(buf, in[i].v_.sv.p, n);
						buf[n] = '\0';
						o.v.str = buf;
						buf += n + 1;
					}
					break;
				default:
					o.v.str = in[i].v_.s;
					break;
				}
			}
		}
		~packed()
		{
			delete[] big_;
		}
		packed(const packed &) = delete;
		packed &operator=(const packed &) = delete;
		const rtr_arg *data() const noexcept
		{
			return out_;
		}
		static constexpr unsigned size() noexcept
		{
			return static_cast<unsigned>(N);
		}

	      private:
		static std::size_t clip(std::size_t n) noexcept
		{
			return n < RTR_MAX_COPY ? n : RTR_MAX_COPY; /* the library cuts there too */
		}
		rtr_arg out_[N];
		char small_[256];
		char *big_ = nullptr;
	};
};

namespace detail
{
template <std::size_t N> using packed = detail_access::packed<N>;

/* A NUL-terminated copy of a view, for the C _copy calls (which copy it again). */
class cstr
{
      public:
	explicit cstr(std::string_view s) noexcept
	{
		std::size_t n = s.size() < RTR_MAX_COPY ? s.size() : RTR_MAX_COPY;
		p_ = n < sizeof(small_) ? small_ : (big_ = new (std::nothrow) char[n + 1]);
		if (p_ != nullptr) {
			std::memcpy(p_, s.data(), n);
			p_[n] = '\0';
		}
	}
	~cstr()
	{
		delete[] big_;
	}
	cstr(const cstr &) = delete;
	cstr &operator=(const cstr &) = delete;
	const char *get() const noexcept
	{
		return p_; /* nullptr when the copy could not be made */
	}
	char *release() noexcept
	{
		char *p = big_;
		big_ = nullptr;
		return p;
	}

      private:
	char *p_;
	char small_[128];
	char *big_ = nullptr;
};

/* A heap copy owned by a Scope (a copied name it records when it ends). */
inline char *dup(std::string_view s) noexcept
{
	std::size_t n = s.size() < RTR_MAX_COPY ? s.size() : RTR_MAX_COPY;
	char *p = new (std::nothrow) char[n + 1];
	if (p != nullptr) {
		std::memcpy(p, s.data(), n);
		p[n] = '\0';
	}
	return p;
}
} // namespace detail

/* Whether an event of category cat would be recorded now: guard costly arguments.
 * Stopped: a load and a branch. */
inline bool enabled(literal cat) noexcept
{
#if defined(RTR_HAVE_CATEGORY_ENABLED)
	return rtr_category_enabled(cat.c_str());
#else
	return rtr__recording_cat(cat.c_str());
#endif
}

/* ------------------------------------------------------------------------- */
/* Scopes                                                                     */

/*
 * A slice from construction to destruction on the calling thread: B/E with literal
 * names (and arguments), one X with a copied name. Not copyable or movable (C++17's
 * guaranteed elision lets `auto s = Scope(...)` compile); destroy it on the thread
 * that made it, in reverse order of construction (automatic storage does that).
 */
class Scope
{
      public:
	Scope(literal cat, literal name) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
			rtr_begin(cat.c_str(), name.c_str());
			cat_ = cat.c_str();
			name_ = name.c_str();
		}
	}
	template <class... A>
	Scope(literal cat, literal name, const arg &first, const A &...rest) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
			const arg a[] = {first, rest...};
			detail::packed<1 + sizeof...(A)> p(a);
			rtr_begin_args(cat.c_str(), name.c_str(), p.data(), p.size());
			cat_ = cat.c_str();
			name_ = name.c_str();
		}
	}
	/* A runtime name (std::string_view, std::string), copied. */
	template <class S, detail::if_copied<S> = 0> Scope(literal cat, const S &name) noexcept
	{
		if (RTR__LIKELY(rtr__recording_cat(cat.c_str())))
			begin_copy(cat.c_str(), std::string_view(name));
	}
	~Scope()
	{
		if (RTR__UNLIKELY(cat_ != nullptr))
			finish();
	}
	Scope(const Scope &) = delete;
	Scope &operator=(const Scope &) = delete;

#if defined(RTR_HAVE_SCOPE_ARGS)
	/* An argument added to this slice before it ends, written on its X or E:
	 * integers (bool and enums too) as int64, floating point as double, text
	 * copied. */
	template <class T,
		  std::enable_if_t<std::is_integral<T>::value || std::is_enum<T>::value, int> = 0>
	void add(literal key, T v) noexcept
	{
		if (cat_ != nullptr)
			rtr_scope_arg_i64(cat_, key.c_str(), static_cast<int64_t>(v));
	}
	template <class T, std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
	void add(literal key, T v) noexcept
	{
		if (cat_ != nullptr)
			rtr_scope_arg_f64(cat_, key.c_str(), static_cast<double>(v));
	}
	void add(literal key, std::string_view v) noexcept
	{
		detail::cstr s(v);
		if (cat_ != nullptr && s.get() != nullptr)
			rtr_scope_arg_str_copy(cat_, key.c_str(), s.get());
	}
#endif

      private:
	void begin_copy(const char *cat, std::string_view name) noexcept
	{
#if defined(RTR_HAVE_POP)
		detail::cstr s(name);
		if (s.get() == nullptr)
			return;
		rtr_begin_copy(cat, s.get());
		cat_ = cat;
		pop_ = true;
#else
		copy_ = detail::dup(name);
		if (copy_ == nullptr)
			return;
		cat_ = cat;
		name_ = copy_;
		t0_ = rtr_now_ns();
#endif
	}
	void finish() noexcept
	{
		if (copy_ != nullptr) {
			rtr_complete_copy(cat_, copy_, t0_, rtr_now_ns() - t0_);
			delete[] copy_;
			return;
		}
#if defined(RTR_HAVE_POP)
		if (pop_) {
			rtr_pop(cat_);
			return;
		}
#endif
		rtr_end(cat_, name_);
	}

	const char *cat_ = nullptr; /* nullptr: nothing began, nothing to end */
	const char *name_ = nullptr;
	char *copy_ = nullptr; /* owned copied name: an X at the end */
	uint64_t t0_ = 0;
#if defined(RTR_HAVE_POP)
	bool pop_ = false;
#endif
};

namespace detail
{
/* RINGTRACE_SCOPE's object: the C RTR_SCOPE's static call site, and its record. */
class site_scope
{
      public:
	site_scope(const rtr_site *site, int *decision) noexcept
	    : s_(rtr__scope_begin(site, decision))
	{
	}
	/* With arguments: a B carrying them now, its E at the end. */
	/* With arguments: lazy(sink) names them, evaluated only now that the event is
	 * recorded; the sink records a B carrying them, its E comes at the end. */
	template <class F>
	site_scope(const rtr_site *site, int *decision, F &&lazy) noexcept : s_{nullptr, 0}
	{
		int state = rtr__recording();

		if (RTR__LIKELY(state == 0))
			return;
		if (RTR__UNLIKELY(state & RTR__STATE_FILTERED) &&
		    !rtr__site_cached(state, site, decision))
			return;
		lazy(sink{site});
		end_ = site;
	}
	~site_scope()
	{
		if (RTR__UNLIKELY(end_ != nullptr))
			rtr_end(end_->cat, end_->name);
		else
			rtr__scope_end(&s_);
	}
	site_scope(const site_scope &) = delete;
	site_scope &operator=(const site_scope &) = delete;

      private:
	struct sink {
		const rtr_site *site;
		template <class... A> void operator()(int, const arg &first, const A &...rest) const
		{
			const arg a[] = {first, rest...};
			packed<1 + sizeof...(A)> p(a);
			rtr_begin_args(site->cat, site->name, p.data(), p.size());
		}
	};
	rtr__scope s_;
	const rtr_site *end_ = nullptr; /* the site whose E is owed */
};
} // namespace detail

/* ------------------------------------------------------------------------- */
/* Events                                                                     */

/* Slices by hand: begin() and end() with the same literal cat and name. */
inline void begin(literal cat, literal name) noexcept
{
	rtr_begin(cat.c_str(), name.c_str());
}
template <class... A>
inline void begin(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_begin_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}
/* A runtime name, copied (rtr_begin_copy). Until the C API can end it by a copied
 * name (rtr_end_copy), prefer a Scope, which ends what it began. */
template <class S, detail::if_copied<S> = 0> inline void begin(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_begin_copy(cat.c_str(), s.get());
	}
}
inline void end(literal cat, literal name) noexcept
{
	rtr_end(cat.c_str(), name.c_str());
}
#if defined(RTR_HAVE_END_COPY)
template <class S, detail::if_copied<S> = 0> inline void end(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_end_copy(cat.c_str(), s.get());
	}
}
#endif

/* Instants on the calling thread. */
inline void instant(literal cat, literal name) noexcept
{
	rtr_instant(cat.c_str(), name.c_str());
}
template <class... A>
inline void instant(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_instant_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}
template <class S, detail::if_copied<S> = 0>
inline void instant(literal cat, const S &name) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_instant_copy(cat.c_str(), s.get());
	}
}

/* Where an instant shows (RTR_INSTANT_*). */
enum class where {
	thread = RTR_INSTANT_THREAD,
	process = RTR_INSTANT_PROCESS,
	global = RTR_INSTANT_GLOBAL
};
template <class... A>
inline void instant(literal cat, literal name, where w, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_instant_scoped(cat.c_str(), name.c_str(), static_cast<int>(w), nullptr,
					   0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_instant_scoped(cat.c_str(), name.c_str(), static_cast<int>(w), p.data(),
					   p.size());
		}
	}
}

/* A complete event with explicit times on the rtr_now_ns() clock. */
inline void complete(literal cat, literal name, uint64_t ts_ns, uint64_t dur_ns) noexcept
{
	rtr_complete(cat.c_str(), name.c_str(), ts_ns, dur_ns);
}
template <class... A>
inline void complete(literal cat, literal name, uint64_t ts_ns, uint64_t dur_ns, const arg &first,
		     const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_complete_args(cat.c_str(), name.c_str(), ts_ns, dur_ns, p.data(), p.size());
	}
}
template <class S, detail::if_copied<S> = 0>
inline void complete(literal cat, const S &name, uint64_t ts_ns, uint64_t dur_ns) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		detail::cstr s{std::string_view(name)};
		if (s.get() != nullptr)
			rtr_complete_copy(cat.c_str(), s.get(), ts_ns, dur_ns);
	}
}

/* Counters: one series per name, or one per argument of one sample. */
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
inline void counter(literal cat, literal name, T value) noexcept
{
	if constexpr (std::is_floating_point_v<T>)
		rtr_counter_f64(cat.c_str(), name.c_str(), static_cast<double>(value));
	else
		rtr_counter_i64(cat.c_str(), name.c_str(), static_cast<int64_t>(value));
}
template <class... A>
inline void counter(literal cat, literal name, const arg &first, const A &...rest) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		const arg a[] = {first, rest...};
		detail::packed<1 + sizeof...(A)> p(a);
		rtr_counter_args(cat.c_str(), name.c_str(), p.data(), p.size());
	}
}

/* Flows: arrows between slices (see rtr_flow_start()). */
inline uint64_t flow_id() noexcept
{
	return rtr_flow_id();
}
inline void flow_start(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_start(cat.c_str(), name.c_str(), id);
}
inline void flow_step(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_step(cat.c_str(), name.c_str(), id);
}
inline void flow_end(literal cat, literal name, uint64_t id) noexcept
{
	rtr_flow_end(cat.c_str(), name.c_str(), id);
}

/* Async spans, matched on (cat, name, id) (see rtr_async_begin()). */
template <class... A>
inline void async_begin(literal cat, literal name, uint64_t id, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_async_begin(cat.c_str(), name.c_str(), id, nullptr, 0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_async_begin(cat.c_str(), name.c_str(), id, p.data(), p.size());
		}
	}
}
template <class... A>
inline void async_instant(literal cat, literal name, uint64_t id, const A &...args) noexcept
{
	if (RTR__LIKELY(rtr__recording_cat(cat.c_str()))) {
		if constexpr (sizeof...(A) == 0) {
			rtr_async_instant(cat.c_str(), name.c_str(), id, nullptr, 0);
		} else {
			const arg a[] = {args...};
			detail::packed<sizeof...(A)> p(a);
			rtr_async_instant(cat.c_str(), name.c_str(), id, p.data(), p.size());
		}
	}
}
inline void async_end(literal cat, literal name, uint64_t id) noexcept
{
	rtr_async_end(cat.c_str(), name.c_str(), id);
}

/* Name the calling thread (copied). */
inline void thread_name(std::string_view name) noexcept
{
	detail::cstr s(name);
	if (s.get() != nullptr)
		rtr_thread_name(s.get());
}

inline uint64_t now_ns() noexcept
{
	return rtr_now_ns();
}

/* ------------------------------------------------------------------------- */
/* Session                                                                    */

/* struct rtr_config with owned strings, filled by rtr_config_init() (defaults plus
 * the RINGTRACE_* environment), then by the setters. */
class Config
{
      public:
	Config() noexcept
	{
		rtr_config_init(&c_);
	}
	Config &path(std::string p)
	{
		path_ = std::move(p);
		has_path_ = true;
		return *this;
	}
	Config &process_name(std::string n)
	{
		process_ = std::move(n);
		has_process_ = true;
		return *this;
	}
	Config &categories(std::string c)
	{
		categories_ = std::move(c);
		has_categories_ = true;
		return *this;
	}
	Config &ring_bytes(std::size_t n) noexcept
	{
		c_.ring_bytes = n;
		return *this;
	}
	Config &block_when_full(bool block = true) noexcept
	{
		c_.on_full = block ? RTR_ON_FULL_BLOCK : RTR_ON_FULL_DROP;
		return *this;
	}
	Config &flush_ms(unsigned ms) noexcept
	{
		c_.flush_ms = ms;
		return *this;
	}
	Config &io(int method) noexcept /* RTR_IO_* */
	{
		c_.io = method;
		return *this;
	}
	Config &clock(int clock) noexcept /* RTR_CLOCK_* */
	{
		c_.clock = clock;
		return *this;
	}
	Config &compress(int how) noexcept /* RTR_COMPRESS_* */
	{
		c_.compress = how;
		return *this;
	}
	Config &cache_mb(unsigned mb) noexcept
	{
		c_.cache_mb = mb;
		return *this;
	}
	Config &stop_timeout_ms(unsigned ms) noexcept
	{
		c_.stop_timeout_ms = ms;
		return *this;
	}
	/* Rotation: a new segment every `mb` MiB of JSON and/or `seconds`; keep the newest. */
	Config &rotate(unsigned mb, unsigned seconds = 0, unsigned keep = 0) noexcept
	{
		c_.max_mb = mb;
		c_.max_seconds = seconds;
		c_.keep = keep;
		return *this;
	}
	/* Flight mode: the newest `mb` MiB in memory, written by snapshots. */
	Config &flight(unsigned mb = 64, bool at_exit = true) noexcept
	{
		c_.mode = RTR_MODE_FLIGHT;
		c_.flight_mb = mb;
		c_.flight_at_exit = at_exit ? 1 : 0;
		return *this;
	}
	/* RINGTRACE_SIGNALS ("TERM,INT") and RINGTRACE_SNAPSHOT_SIGNAL ("USR2"). */
	Config &signals(std::string list)
	{
		signals_ = std::move(list);
		has_signals_ = true;
		return *this;
	}
	Config &snapshot_signal(std::string sig)
	{
		snapshot_signal_ = std::move(sig);
		has_snapshot_signal_ = true;
		return *this;
	}
	/* The C struct, its strings pointing into this object: valid while it lives. */
	rtr_config get() const noexcept
	{
		rtr_config c = c_;
		if (has_path_)
			c.path = path_.c_str();
		if (has_process_)
			c.process_name = process_.c_str();
		if (has_categories_)
			c.categories = categories_.c_str();
		if (has_signals_)
			c.signals = signals_.c_str();
		if (has_snapshot_signal_)
			c.snapshot_signal = snapshot_signal_.c_str();
		return c;
	}

      private:
	rtr_config c_;
	std::string path_, process_, categories_, signals_, snapshot_signal_;
	bool has_path_ = false, has_process_ = false, has_categories_ = false, has_signals_ = false,
	     has_snapshot_signal_ = false;
};

/* The recorder from construction to destruction: rtr_start(), rtr_stop(). One at a
 * time per process, made and destroyed on one thread (as rtr_start()/rtr_stop()). */
class Session
{
      public:
	Session() noexcept : err_(rtr_start(nullptr))
	{
	}
	explicit Session(const Config &cfg) noexcept
	{
		rtr_config c = cfg.get();
		err_ = rtr_start(&c);
	}
	~Session()
	{
		stop();
	}
	Session(const Session &) = delete;
	Session &operator=(const Session &) = delete;

	/* rtr_start()'s result: 0, or a negative errno (the session then records nothing). */
	int error() const noexcept
	{
		return err_;
	}
	explicit operator bool() const noexcept
	{
		return err_ == 0 && !stopped_;
	}
	/* rtr_flush(): 0 or a negative errno. */
	int flush() noexcept
	{
		return rtr_flush();
	}
	/* rtr_snapshot(): flight mode's window to path (nullptr: the pattern's next
	 * number), or the end of the segment; 0 or a negative errno. */
	int snapshot(const char *path = nullptr) noexcept
	{
		return rtr_snapshot(path);
	}
	/* rtr_stop() now (the destructor then does nothing): 0 or a negative errno. */
	int stop() noexcept
	{
		if (err_ != 0 || stopped_)
			return 0;
		stopped_ = true;
		return rtr_stop();
	}
	/* The file's path, its pattern expanded (rtr_trace_path()). */
	static std::string_view path() noexcept
	{
		return rtr_trace_path();
	}
	static rtr_stats stats() noexcept
	{
		rtr_stats st{};
		rtr_stats_get(&st);
		return st;
	}

      private:
	int err_ = 0;
	bool stopped_ = false;
};

} // namespace ringtrace

#endif /* RINGTRACE_CXX_HPP */
