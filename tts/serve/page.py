"""The page ``tts serve`` shows at ``/``: type text, choose a voice, a vocoder (the service's
default preselected) and, for a voice of several speakers, a speaker; listen, and see beside the
audio the alignment and mel figure of what was said, its warnings (step-limit hits, skips,
repeats) and the time each stage took."""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tts</title>
<style>
body{font-family:system-ui,sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;color:#222}
h1{font-size:1.4em;margin:0 0 .6em}
textarea{width:100%;box-sizing:border-box;font-size:1.05em;padding:.4em}
.controls{display:flex;gap:1em;align-items:center;flex-wrap:wrap;margin:.6em 0}
button{font-size:1em;padding:.3em 1.2em}
.result{display:grid;grid-template-columns:minmax(260px,1fr) 2.4fr;gap:1.2em;align-items:start}
@media (max-width:800px){.result{grid-template-columns:1fr}}
audio{width:100%}
#status{color:#555}
#warnings{color:#b00;padding-left:1.2em}
#clean{color:#070}
img{max-width:100%;border:1px solid #ddd}
</style></head>
<body>
<h1>Text to speech</h1>
<textarea id="text" rows="4" maxlength="2000">The quick brown fox jumps over the lazy dog.</textarea>
<div class="controls">
<label>voice <select id="voice"></select></label>
<label>vocoder <select id="vocoder"></select></label>
<label id="speaker-choice" hidden>speaker <select id="speaker"></select></label>
<button id="speak">Speak</button>
</div>
<div class="result">
<div>
<audio id="audio" controls></audio>
<p id="status"></p>
<p id="clean" hidden>no skips, repeats or step-limit hits</p>
<ul id="warnings"></ul>
</div>
<div><img id="figure" alt="alignment and mel spectrogram of what was said"></div>
</div>
<script>
const voices = {}, defaultVocoders = {}, speakers = {};
async function load() {
  const health = await (await fetch("/health")).json();
  Object.assign(voices, health.voices);
  Object.assign(defaultVocoders, health.default_vocoders);
  Object.assign(speakers, health.speakers);
  const voice = document.getElementById("voice");
  for (const name of Object.keys(voices)) voice.add(new Option(name, name));
  voice.value = health.default_voice;
  fillVocoders();
  voice.onchange = fillVocoders;
}
function fillVocoders() {
  const vocoder = document.getElementById("vocoder"), voice = document.getElementById("voice").value;
  vocoder.innerHTML = "";
  for (const name of voices[voice]) vocoder.add(new Option(name, name));
  vocoder.value = defaultVocoders[voice];  // what the service uses when a request names none
  const speaker = document.getElementById("speaker");
  speaker.innerHTML = "";
  for (const name of speakers[voice] || []) speaker.add(new Option(name, name));
  document.getElementById("speaker-choice").hidden = !(speakers[voice] || []).length;
}
function took(answer) {
  const t = answer.timings, parts = ["frontend", "acoustic", "vocoder"].map(k => k + " " + t[k].toFixed(2));
  return answer.seconds.toFixed(2) + " s of audio in " + t.total.toFixed(2) + " s (" + parts.join(", ")
         + "; real-time factor " + (t.total / Math.max(answer.seconds, 1e-3)).toFixed(2) + ")";
}
async function speak() {
  const status = document.getElementById("status"), warnings = document.getElementById("warnings");
  status.textContent = "speaking…";
  warnings.innerHTML = "";
  document.getElementById("clean").hidden = true;
  const body = {text: document.getElementById("text").value, voice: document.getElementById("voice").value,
                vocoder: document.getElementById("vocoder").value};
  if (!document.getElementById("speaker-choice").hidden) body.speaker = document.getElementById("speaker").value;
  const response = await fetch("/synthesize?format=json",
                               {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const answer = await response.json();
  if (!response.ok) { status.textContent = "error: " + answer.error; return; }
  document.getElementById("audio").src = "data:audio/wav;base64," + answer.audio;
  document.getElementById("figure").src = "data:image/png;base64," + answer.figure;
  for (const warning of answer.warnings) {
    warnings.appendChild(Object.assign(document.createElement("li"), {textContent: warning}));
  }
  document.getElementById("clean").hidden = answer.warnings.length > 0;
  status.textContent = took(answer) + " by " + answer.voice + (answer.speaker ? " (" + answer.speaker + ")" : "")
                       + " through " + answer.vocoder;
}
document.getElementById("speak").onclick = speak;
load();
</script>
</body></html>
"""
